/// A rate limit of Apple's that requests spend: verifyReceipt has one; the App Store Server API has one
/// per endpoint. The pipeline keeps a token bucket, a one-second send window and an adaptive rate per
/// budget, and a `Retry-After` can pause one budget without slowing the others.
///
/// Apple's limits are per app: in a run of several apps each app's requests spend budgets of their own
/// (`app` is its bundle id; docs/architecture.md, "Several apps").
public struct RateBudget: Hashable, Sendable, CustomStringConvertible {
    /// A stable name, used in logs (`verifyReceipt`, `GET /inApps/v1/subscriptions`, ...).
    public let name: String
    /// Requests per second allowed on this budget (never more than `floor(rate)` in any second).
    public let rate: Double
    /// The app (bundle id) whose limit this is, in a run of several apps; nil in a one-app run.
    public let app: String?

    public init(name: String, rate: Double, app: String? = nil) {
        self.name = name
        self.rate = rate
        self.app = app
    }

    public var description: String { app.map { "\(name) [\($0)]" } ?? name }
}
