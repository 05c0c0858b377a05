import Foundation
import ReceiptDomain

/// One App Store Server Notification whose signed payload (and the signed transaction in it) verified:
/// the columns of `app_store_notifications` (docs/architecture.md, "Notification history").
public struct VerifiedNotification: Sendable, Equatable {
    public var notificationUUID: String
    public var notificationType: String
    public var subtype: String?
    public var environment: String?
    public var bundleId: String?
    /// The subscription it names; nil for a notification about none (TEST, a summary).
    public var originalTransactionId: String?
    public var transactionId: String?
    /// The product it is about: its transaction's, or a renewal-date extension's (`summary`).
    public var productId: String?
    public var signedDate: Date?
    /// The compact JWS as Apple sent it (stored, never logged).
    public var signedPayload: String
    /// The one-time purchase (consumable, non-consumable, non-renewing) its transaction is, as a ledger row: kind
    /// `one_time`, or `refund` once refunded; nil when the transaction is a subscription's or there is none.
    public var oneTimePurchase: LedgerEntry? = nil

    public init(
        notificationUUID: String,
        notificationType: String,
        subtype: String?,
        environment: String?,
        bundleId: String?,
        originalTransactionId: String?,
        transactionId: String?,
        productId: String? = nil,
        signedDate: Date?,
        signedPayload: String
    ) {
        self.notificationUUID = notificationUUID
        self.notificationType = notificationType
        self.subtype = subtype
        self.environment = environment
        self.bundleId = bundleId
        self.originalTransactionId = originalTransactionId
        self.transactionId = transactionId
        self.productId = productId
        self.signedDate = signedDate
        self.signedPayload = signedPayload
    }
}
