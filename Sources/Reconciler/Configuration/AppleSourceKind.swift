/// Which way a run asks Apple (`--source`, `APPLE_SOURCE`): the App Store Server API when an In-App
/// Purchase key is configured (`auto`, the default), else verifyReceipt. Stored with the run, so
/// `--resume` asks the same way.
public enum AppleSourceKind: String, Sendable, Codable, CaseIterable {
    case auto
    case serverAPI = "server-api"
    case verifyReceipt = "verify-receipt"
}
