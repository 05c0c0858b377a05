import AppleReports

/// One consolidated Financial report row (`apple_financial_rows`) as the monthly comparison reads it: units and
/// extended partner share per fiscal month, product, country and customer currency (docs/tie-out.md, "The monthly
/// view").
public struct TieOutPartnerShare: Sendable, Equatable {
    public var fiscalMonth: AppleFiscalMonth
    /// Vendor Identifier: the product id.
    public var productId: String
    /// Country Of Sale, ISO 3166-1 alpha-2.
    public var country: String
    /// Customer Currency.
    public var currency: String
    /// Quantity, negative for returns.
    public var quantity: Int
    /// Extended Partner Share in milliunits of `shareCurrency`.
    public var amount: Int64
    /// Partner Share Currency.
    public var shareCurrency: String

    public init(
        fiscalMonth: AppleFiscalMonth,
        productId: String,
        country: String,
        currency: String,
        quantity: Int,
        amount: Int64,
        shareCurrency: String? = nil
    ) {
        self.fiscalMonth = fiscalMonth
        self.productId = productId
        self.country = country
        self.currency = currency
        self.quantity = quantity
        self.amount = amount
        self.shareCurrency = shareCurrency ?? currency
    }
}
