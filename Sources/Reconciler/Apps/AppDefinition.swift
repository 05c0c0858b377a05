/// One app a run reconciles (docs/architecture.md, "Several apps"): its bundle id, how the run asks Apple about
/// it and with which credentials, and its own rate limit (Apple's limits are per app). Every run reconciles a list of
/// them: the apps of `--apps FILE`, or the one app of the environment and flags.
public struct AppDefinition: Sendable {
    public var bundleId: String
    public var credentials: AppCredentials
    /// Requests per second to Apple for this app; nil: the run's `--rate`.
    public var rate: Double?
    /// An In-App Purchase key of a verifyReceipt app whose notification history the run reads first (the one app of
    /// the environment, when a key is configured beside the shared secret).
    public var notificationKey: ServerAPISettings?

    public init(
        bundleId: String,
        credentials: AppCredentials,
        rate: Double? = nil,
        notificationKey: ServerAPISettings? = nil
    ) {
        self.bundleId = bundleId
        self.credentials = credentials
        self.rate = rate
        self.notificationKey = notificationKey
    }

    /// `.verifyReceipt` or `.serverAPI`.
    public var source: AppleSourceKind { credentials.source }

    /// The key whose notification history the run reads before the scan: a Server API app's own, or the key
    /// configured beside a verifyReceipt app's shared secret.
    public var notificationSettings: ServerAPISettings? {
        if case .serverAPI(let settings) = credentials { return settings }
        return notificationKey
    }

    /// The verifyReceipt settings, for a verifyReceipt app.
    public var apple: AppleConfiguration? {
        if case .verifyReceipt(let apple) = credentials { return apple }
        return nil
    }
}
