import AppleReports

/// What Apple's detailed Financial reports say settled in another fiscal month than it was sold, for one key of the
/// monthly view (docs/tie-out.md, "The monthly view"): the consolidated report of a month holds what Apple settled
/// in it, the Subscriber report what was sold.
public struct TieOutSettlement: Sendable, Equatable {
    public var fiscalMonth: AppleFiscalMonth
    public var productId: String
    public var country: String
    /// Customer Currency.
    public var currency: String
    /// Sold before the month, settled in it (the month's detailed report, transaction dates before its start).
    public var quantityIn = 0
    public var amountIn: Int64 = 0
    /// Sold in the month, settled in the next (the next month's detailed report, transaction dates in the month).
    public var quantityOut = 0
    public var amountOut: Int64 = 0

    public init(fiscalMonth: AppleFiscalMonth, productId: String, country: String, currency: String) {
        self.fiscalMonth = fiscalMonth
        self.productId = productId
        self.country = country
        self.currency = currency
    }
}
