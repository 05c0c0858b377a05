/// Apple's per-endpoint rate limits for the Server API, in requests per second (docs/simulator.md, "Limits"):
/// production 50/s for statuses, history, transaction info and notification history and 10/s for refund
/// history and Look Up Order ID; sandbox 10% of those (at least 1). Over the limit in any one-second window: HTTP 429, errorCode
/// 4290000, `Retry-After` as a UNIX time in milliseconds.
public struct ServerAPILimits: Sendable, Equatable {
    /// Production limits; an endpoint missing here is not limited.
    public var production: [ServerAPIService.Endpoint: Int]

    public static let apple = ServerAPILimits(production: [
        .subscriptions: 50, .history: 50, .transactions: 50, .notificationHistory: 50, .refundHistory: 10,
        .orderLookup: 10,
    ])
    public static let unlimited = ServerAPILimits(production: [:])

    public init(production: [ServerAPIService.Endpoint: Int]) {
        self.production = production
    }

    /// The limit of `endpoint` in the environment, or nil when unlimited.
    public func limit(_ endpoint: ServerAPIService.Endpoint, sandbox: Bool) -> Int? {
        guard let p = production[endpoint] else { return nil }
        return sandbox ? max(1, p / 10) : p
    }
}
