/// How a run asks Apple about one app, with the credentials that way needs (docs/architecture.md, "Several apps"):
/// verifyReceipt with the app's shared secret, or the App Store Server API with its In-App Purchase key. Built only
/// from complete, checked settings (`AppleConfiguration.load`, `ServerAPISettings.load`), so a run never meets an app
/// it cannot ask.
public enum AppCredentials: Sendable {
    case verifyReceipt(AppleConfiguration)
    case serverAPI(ServerAPISettings)

    /// The source these credentials ask Apple through.
    public var source: AppleSourceKind {
        switch self {
        case .verifyReceipt: return .verifyReceipt
        case .serverAPI: return .serverAPI
        }
    }
}
