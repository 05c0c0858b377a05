/// A rate limit of Apple's that requests spend: verifyReceipt has one; the App Store Server API has one
/// per endpoint. The pipeline keeps a token bucket, a one-second send window and an adaptive rate per
/// budget, and a `Retry-After` can pause one budget without slowing the others.
public struct RateBudget: Hashable, Sendable, CustomStringConvertible {
    /// A stable name, used in logs (`verifyReceipt`, `GET /inApps/v1/subscriptions`, ...).
    public let name: String
    /// Requests per second allowed on this budget (never more than `floor(rate)` in any second).
    public let rate: Double

    public init(name: String, rate: Double) {
        self.name = name
        self.rate = rate
    }

    public var description: String { name }
}
