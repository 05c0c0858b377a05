import AppleReports
import Foundation

/// One money event of the ledger (`subscription_transactions`): a paid purchase on its purchase instant, or its
/// refund on the refund instant (docs/tie-out.md, "What is compared").
public struct TieOutLedgerEvent: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case sale, refund
    }

    public var transactionId: String
    public var kind: Kind
    /// The purchase instant of a sale, the refund (revocation) instant of a refund.
    public var instant: Date
    public var productId: String
    /// ISO 3166-1 alpha-2 of its storefront, or a named unknown (`StorefrontCountry`).
    public var country: String
    public var currency: String
    /// Milliunits: the price of a sale, minus the refunded amount of a refund.
    public var amount: Int64
    /// Estimated proceeds in milliunits, signed like `amount` (`CommissionPolicy`).
    public var proceeds: Int64
    /// The commission rate of the estimate, milliunits of a percent (30000 = 30%).
    public var commissionRate: Int64
    /// A family member's access through another person's purchase (`FAMILY_SHARED`).
    public var familyShared: Bool
    /// The Pacific day of the purchase (for a refund: of the refunded purchase).
    public var purchaseDay: PacificDay

    public init(
        transactionId: String,
        kind: Kind,
        instant: Date,
        productId: String,
        country: String,
        currency: String,
        amount: Int64,
        proceeds: Int64,
        commissionRate: Int64,
        familyShared: Bool = false,
        purchaseDay: PacificDay? = nil
    ) {
        self.transactionId = transactionId
        self.kind = kind
        self.instant = instant
        self.productId = productId
        self.country = country
        self.currency = currency
        self.amount = amount
        self.proceeds = proceeds
        self.commissionRate = commissionRate
        self.familyShared = familyShared
        self.purchaseDay = purchaseDay ?? PacificDay(of: instant)
    }

    /// The Pacific day Apple's Sales and Trends reports would book it on.
    public var day: PacificDay { PacificDay(of: instant) }

    /// Units: 1 for a sale, -1 for a refund (Apple's signs).
    public var units: Int { kind == .sale ? 1 : -1 }
}
