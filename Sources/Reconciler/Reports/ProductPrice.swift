import Foundation

/// One row of the optional `products` catalog: a product's customer price per period in one currency.
///
/// verifyReceipt carries no prices, so money figures exist only for products listed here.
public struct ProductPrice: Sendable, Equatable {
    public var productId: String
    /// ISO 4217 code, e.g. `USD`.
    public var currency: String
    /// Exact decimal price (never a binary floating-point value).
    public var price: Decimal
    /// ISO 8601 period: `P1W`, `P1M`, ..., `P1Y`.
    public var period: String
    public var displayName: String?

    public init(productId: String, currency: String, price: Decimal, period: String, displayName: String? = nil) {
        self.productId = productId
        self.currency = currency
        self.price = price
        self.period = period
        self.displayName = displayName
    }
}
