import Foundation

/// One transaction of a subscription as the reconciler records it in its ledger.
///
/// `kind` is derived from the whole subscription history (see `Kind`), so a transaction's kind can
/// only be computed by the engine, never from the transaction alone.
public struct LedgerEntry: Sendable, Equatable {
    /// What a transaction was, for the ledger.
    public enum Kind: String, Sendable, Equatable, CaseIterable {
        /// The first purchase of the subscription (`transaction_id == original_transaction_id`, or the
        /// earliest purchase when that transaction is not in the response).
        case initial
        /// Any later period of the same subscription.
        case renewal
        /// The transaction purchased next after an `is_upgraded` transaction: the plan it was upgraded to.
        case upgrade
        /// Refunded or revoked: has a cancellation date and is **not** `is_upgraded`.
        case refund
        /// A consumable, non-consumable or non-renewing purchase (Apple's `ONE_TIME_CHARGE`), read from a
        /// notification: money, never a subscription (docs/reports.md, "One-time purchases").
        case oneTime = "one_time"
    }

    public var transactionId: String
    public var originalTransactionId: String
    public var productId: String
    public var purchaseDate: Date?
    public var expiresDate: Date?
    public var kind: Kind
    /// True for the transaction that was replaced by an upgrade (its cancellation date is the upgrade time).
    public var replacedByUpgrade: Bool
    public var isTrial: Bool
    public var isIntroOffer: Bool
    /// `offer_code_ref_name`, else `promotional_offer_id`.
    public var offer: String?
    public var cancellationDate: Date?
    public var cancellationReason: Int?
    public var webOrderLineItemId: String?
    public var subscriptionGroupIdentifier: String?
    public var ownershipType: String?
    /// Price, currency, storefront, refund type and share and the signed transaction (App Store Server API only).
    public var signedFacts: SignedTransactionFacts? = nil

    public init(
        transactionId: String,
        originalTransactionId: String,
        productId: String,
        purchaseDate: Date?,
        expiresDate: Date?,
        kind: Kind,
        replacedByUpgrade: Bool,
        isTrial: Bool,
        isIntroOffer: Bool,
        offer: String?,
        cancellationDate: Date?,
        cancellationReason: Int?,
        webOrderLineItemId: String?,
        subscriptionGroupIdentifier: String?,
        ownershipType: String?
    ) {
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.purchaseDate = purchaseDate
        self.expiresDate = expiresDate
        self.kind = kind
        self.replacedByUpgrade = replacedByUpgrade
        self.isTrial = isTrial
        self.isIntroOffer = isIntroOffer
        self.offer = offer
        self.cancellationDate = cancellationDate
        self.cancellationReason = cancellationReason
        self.webOrderLineItemId = webOrderLineItemId
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.ownershipType = ownershipType
    }
}
