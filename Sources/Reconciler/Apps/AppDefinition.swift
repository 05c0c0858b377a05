/// One app a run reconciles (docs/architecture.md, "Several apps"): its bundle id, how the run asks Apple about
/// it and with which credentials, and its own rate limit (Apple's limits are per app). Every run reconciles a list of
/// them: the apps of `--apps FILE`, or the one app of the environment and flags.
public struct AppDefinition: Sendable {
    public var bundleId: String
    public var credentials: AppCredentials
    /// Requests per second to Apple for this app; nil: the run's `--rate`.
    public var rate: Double?

    public init(bundleId: String, credentials: AppCredentials, rate: Double? = nil) {
        (self.bundleId, self.credentials, self.rate) = (bundleId, credentials, rate)
    }

    /// `.verifyReceipt` or `.serverAPI`.
    public var source: AppleSourceKind { credentials.source }

    /// The key whose notification history the run reads first (`AppCredentials.notificationSettings`).
    public var notificationSettings: ServerAPISettings? { credentials.notificationSettings }

    /// The verifyReceipt settings, for a verifyReceipt app.
    public var apple: AppleConfiguration? {
        if case .verifyReceipt(let apple, _) = credentials { return apple }
        return nil
    }
}
