import Foundation

/// The stored subscription row, reduced to what the decision engine compares against.
///
/// Optional fields are nil when never known (a freshly imported row); the engine treats a nil
/// state as "possibly entitled" so that a first check that finds it expired reports `lapsed`.
public struct StoredSubscription: Sendable, Equatable {
    public var originalTransactionId: String
    public var userId: String
    public var productId: String
    public var bundleId: String?
    public var environment: AppleEnvironment?
    public var expiresAt: Date?
    public var state: SubscriptionState?
    public var autoRenew: Bool?
    public var autoRenewProductId: String?
    public var gracePeriodExpiresAt: Date?
    public var latestTransactionId: String?
    public var revokedAt: Date?
    public var expirationIntent: Int?
    public var inBillingRetry: Bool?

    public init(
        originalTransactionId: String,
        userId: String,
        productId: String,
        bundleId: String? = nil,
        environment: AppleEnvironment? = nil,
        expiresAt: Date? = nil,
        state: SubscriptionState? = nil,
        autoRenew: Bool? = nil,
        autoRenewProductId: String? = nil,
        gracePeriodExpiresAt: Date? = nil,
        latestTransactionId: String? = nil,
        revokedAt: Date? = nil,
        expirationIntent: Int? = nil,
        inBillingRetry: Bool? = nil
    ) {
        self.originalTransactionId = originalTransactionId
        self.userId = userId
        self.productId = productId
        self.bundleId = bundleId
        self.environment = environment
        self.expiresAt = expiresAt
        self.state = state
        self.autoRenew = autoRenew
        self.autoRenewProductId = autoRenewProductId
        self.gracePeriodExpiresAt = gracePeriodExpiresAt
        self.latestTransactionId = latestTransactionId
        self.revokedAt = revokedAt
        self.expirationIntent = expirationIntent
        self.inBillingRetry = inBillingRetry
    }
}
