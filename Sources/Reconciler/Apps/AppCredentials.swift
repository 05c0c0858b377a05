/// How a run asks Apple about one app, with the credentials that way needs (docs/architecture.md, "Several apps"):
/// verifyReceipt with the app's shared secret, or the App Store Server API with its In-App Purchase key. Built only
/// from complete, checked settings (`AppleConfiguration.load`, `ServerAPISettings.load`), so a run never meets an app
/// it cannot ask.
public enum AppCredentials: Sendable {
    /// verifyReceipt with the shared secret; `notifications`: an In-App Purchase key configured beside it (the one app
    /// of the environment), whose notification history the run reads first.
    case verifyReceipt(AppleConfiguration, notifications: ServerAPISettings? = nil)
    case serverAPI(ServerAPISettings)

    /// The key whose notification history the run reads before the scan: a Server API app's own, or the key
    /// configured beside a verifyReceipt app's shared secret.
    public var notificationSettings: ServerAPISettings? {
        switch self {
        case .verifyReceipt(_, let key): return key
        case .serverAPI(let settings): return settings
        }
    }

    /// The source these credentials ask Apple through.
    public var source: AppleSourceKind {
        switch self {
        case .verifyReceipt: return .verifyReceipt
        case .serverAPI: return .serverAPI
        }
    }
}
