/// One app a run reconciles (docs/architecture.md, "Several apps"): its bundle id, how the run asks Apple about
/// it and with which credentials, and its own rate limit (Apple's limits are per app).
public struct AppDefinition: Sendable {
    public var bundleId: String
    /// `.verifyReceipt` or `.serverAPI`.
    public var source: AppleSourceKind
    /// verifyReceipt's endpoints and shared secret (verifyReceipt apps).
    public var apple: AppleConfiguration?
    /// The In-App Purchase key, ids, endpoints, roots and budgets (App Store Server API apps).
    public var serverAPI: ServerAPISettings?
    /// Requests per second to Apple for this app; nil: the run's `--rate`.
    public var rate: Double?

    public init(
        bundleId: String,
        source: AppleSourceKind,
        apple: AppleConfiguration? = nil,
        serverAPI: ServerAPISettings? = nil,
        rate: Double? = nil
    ) {
        self.bundleId = bundleId
        self.source = source
        self.apple = apple
        self.serverAPI = serverAPI
        self.rate = rate
    }
}
