import Foundation

/// One row of the optional `products` catalog: a product's customer price per period in one currency, and the
/// price per period of its pay-as-you-go introductory offer when known.
///
/// verifyReceipt carries no prices, so its transactions have money figures only through this catalog
/// (docs/reports.md, "Money from the catalog").
public struct ProductPrice: Sendable, Equatable {
    public var productId: String
    /// ISO 4217 code, e.g. `USD`.
    public var currency: String
    /// Exact decimal price (never a binary floating-point value).
    public var price: Decimal
    /// ISO 8601 period: `P1W`, `P1M`, ..., `P1Y`.
    public var period: String
    public var displayName: String?
    /// Price per period of the pay-as-you-go introductory offer in `currency`; nil: unknown.
    public var introPrice: Decimal?
    public var subscriptionGroupId: String?
    /// The product's Apple ID in App Store Connect (the Subscriber report's `Subscription Apple ID`), digits; nil:
    /// not given (docs/tie-out.md, "Products: the Apple ID map").
    public var appleId: String? = nil
}
