import Foundation

/// One in-app purchase found in a stored receipt (attribute type 17 of an app receipt, or the
/// `purchase-info` of an iOS 6 style transaction receipt). Unverified: use the ids to ask the App Store
/// Server API, never to grant anything.
public struct InAppPurchaseRecord: Sendable, Equatable {
    /// 1701.
    public var quantity: Int?
    /// 1702.
    public var productId: String?
    /// 1703.
    public var transactionId: String?
    /// 1705.
    public var originalTransactionId: String?
    /// 1704.
    public var purchaseDate: Date?
    /// 1706.
    public var originalPurchaseDate: Date?
    /// 1708 (subscriptions only).
    public var expiresDate: Date?
    /// 1711.
    public var webOrderLineItemId: String?
    /// 1712 (refunded or revoked).
    public var cancellationDate: Date?

    public init(
        quantity: Int? = nil,
        productId: String? = nil,
        transactionId: String? = nil,
        originalTransactionId: String? = nil,
        purchaseDate: Date? = nil,
        originalPurchaseDate: Date? = nil,
        expiresDate: Date? = nil,
        webOrderLineItemId: String? = nil,
        cancellationDate: Date? = nil
    ) {
        self.quantity = quantity
        self.productId = productId
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.expiresDate = expiresDate
        self.webOrderLineItemId = webOrderLineItemId
        self.cancellationDate = cancellationDate
    }
}
