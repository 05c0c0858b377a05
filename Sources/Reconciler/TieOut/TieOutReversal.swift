import AppleReports
import Foundation

/// A ledger transaction whose refund Apple reversed (a `REFUND_REVERSED` notification names it): the ledger holds it
/// unrefunded, while a Subscriber report of the refund's day may still carry the refund (docs/tie-out.md,
/// "Matching").
public struct TieOutReversal: Sendable, Equatable {
    public var transactionId: String
    public var productId: String
    /// ISO 3166-1 alpha-2 of its storefront, or a named unknown (`StorefrontCountry`).
    public var country: String
    public var currency: String
    /// The Pacific day of its purchase.
    public var purchaseDay: PacificDay
    /// Its price in milliunits: a refund of it is at most this.
    public var price: Int64
    /// When Apple signed the reversal.
    public var reversedAt: Date

    public init(
        transactionId: String,
        productId: String,
        country: String,
        currency: String,
        purchaseDay: PacificDay,
        price: Int64,
        reversedAt: Date
    ) {
        self.transactionId = transactionId
        self.productId = productId
        self.country = country
        self.currency = currency
        self.purchaseDay = purchaseDay
        self.price = price
        self.reversedAt = reversedAt
    }
}
