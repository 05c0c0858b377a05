import Foundation

/// The engine's verdict on one subscription: the new row values and how they differ from the stored row.
///
/// For `.rejected` decisions every value mirrors the stored row, `state` is nil (no verdict) and
/// `rejectReason` is set: callers must not change entitlement from a rejected decision.
public struct Decision: Sendable, Equatable {
    public var outcome: DecisionOutcome
    public var originalTransactionId: String
    /// nil only for `.rejected`.
    public var state: SubscriptionState?
    public var expiresAt: Date?
    public var productId: String
    public var autoRenew: Bool?
    public var autoRenewProductId: String?
    public var expirationIntent: Int?
    public var gracePeriodExpiresAt: Date?
    public var inBillingRetry: Bool
    /// Trial / intro flags of the transaction that gives `expiresAt`.
    public var isTrial: Bool
    public var isIntroOffer: Bool
    public var latestTransactionId: String?
    /// When revoked: the cancellation time of the refunded transaction that caused it.
    public var revokedAt: Date?
    /// When revoked: that transaction's `cancellation_reason`.
    public var cancellationReason: Int?
    public var environment: AppleEnvironment?
    public var subscriptionGroupIdentifier: String?
    /// The response's `latest_receipt`, to store in place of the old receipt.
    public var latestReceipt: String?
    /// Every transaction of this `original_transaction_id` in the response, in purchase order.
    public var ledger: [LedgerEntry]
    /// True only when a refund/revocation moved the expiry before the stored one.
    public var expiryMovedBackwards: Bool
    /// Why the expiry moved backwards, when it did.
    public var expiryMovedBackwardsReason: String?
    /// Set for `.rejected`.
    public var rejectReason: VerdictReason?
    /// Human notes on judgement calls (stored expiry kept, renewal info missing, ...).
    public var notes: [String]
    /// App Store Server API only: the newest signed transaction and renewal info of the subscription, stored
    /// beside `latest_receipt`, and the newest purchase date the transaction history was read through.
    public var signedTransactionInfo: String? = nil
    public var signedRenewalInfo: String? = nil
    public var historyThrough: Date? = nil
    /// The customer's ids and the next renewal's terms, stored beside the entitlement.
    public var customer = CustomerFacts()

    public init(
        outcome: DecisionOutcome,
        originalTransactionId: String,
        state: SubscriptionState?,
        expiresAt: Date?,
        productId: String,
        autoRenew: Bool?,
        autoRenewProductId: String?,
        expirationIntent: Int?,
        gracePeriodExpiresAt: Date?,
        inBillingRetry: Bool,
        isTrial: Bool,
        isIntroOffer: Bool,
        latestTransactionId: String?,
        revokedAt: Date?,
        cancellationReason: Int?,
        environment: AppleEnvironment?,
        subscriptionGroupIdentifier: String?,
        latestReceipt: String?,
        ledger: [LedgerEntry],
        expiryMovedBackwards: Bool,
        expiryMovedBackwardsReason: String?,
        rejectReason: VerdictReason?,
        notes: [String]
    ) {
        self.outcome = outcome
        self.originalTransactionId = originalTransactionId
        self.state = state
        self.expiresAt = expiresAt
        self.productId = productId
        self.autoRenew = autoRenew
        self.autoRenewProductId = autoRenewProductId
        self.expirationIntent = expirationIntent
        self.gracePeriodExpiresAt = gracePeriodExpiresAt
        self.inBillingRetry = inBillingRetry
        self.isTrial = isTrial
        self.isIntroOffer = isIntroOffer
        self.latestTransactionId = latestTransactionId
        self.revokedAt = revokedAt
        self.cancellationReason = cancellationReason
        self.environment = environment
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.latestReceipt = latestReceipt
        self.ledger = ledger
        self.expiryMovedBackwards = expiryMovedBackwards
        self.expiryMovedBackwardsReason = expiryMovedBackwardsReason
        self.rejectReason = rejectReason
        self.notes = notes
    }

    /// Whether the customer is entitled according to this decision (never for rejected decisions).
    public var isEntitled: Bool { state?.isEntitled ?? false }
}
