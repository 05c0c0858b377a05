/// One transaction of a subscription as it exists at some instant.
public struct SimTransaction: Sendable, Equatable {
    public var index: Int
    public var transactionId: UInt64
    public var originalTransactionId: UInt64
    public var webOrderLineItemId: UInt64
    public var product: SimProduct
    public var purchase: Int64
    public var originalPurchase: Int64
    public var expires: Int64
    public var isTrial: Bool
    public var isIntro: Bool
    public var offerCodeRefName: String?
    public var familyShared: Bool
    /// Set for refunds (with `cancellationReason`) and for upgrades that carry a date (with `isUpgraded`).
    public var cancellation: Int64?
    public var cancellationReason: Int?
    public var isUpgraded: Bool
    /// The offer this transaction was billed under (introductory, promotional, offer code, win-back), if any.
    public var offer: SubscriptionOffer? = nil
    /// Renewed at the raised price of the plan's price increase.
    public var priceIncreased: Bool = false

    /// Refunded or revoked: counts as never purchased.
    public var isRefunded: Bool { cancellation != nil && !isUpgraded }
}
