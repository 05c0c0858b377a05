/// One row of Apple's detailed Financial report (reportType FINANCE_DETAIL, region Z1): proceeds by transaction and
/// settlement date within a fiscal month. A return (refund) is `R` with a negative quantity and extended partner share.
public struct FinanceDetailReportRow: Sendable, Equatable {
    public var line: Int
    /// `YYYY-MM-DD`: when the customer was charged (or refunded), and when Apple settled it.
    public var transactionDate: String
    public var settlementDate: String
    /// The product id set in App Store Connect.
    public var sku: String
    /// The sale's product, country, units, proceeds and price.
    public var amounts: FinancialAmounts
    public var title: String?
    public var developerName: String?
    public var productTypeIdentifier: String?
    public var promoCode: String?
    public var orderType: String?
    public var region: String?

    static let requiredColumns = ["Transaction Date", "Settlement Date", "SKU"] + FinancialAmounts.requiredColumns

    /// Reads one data row (the detailed Financial report's parser).
    init(_ row: AppleReportRowReader) throws(AppleReportError) {
        line = row.line
        transactionDate = try row.date("Transaction Date")
        settlementDate = try row.date("Settlement Date")
        sku = try row.required("SKU")
        amounts = try FinancialAmounts(row)
        title = try row.optional("Title")
        developerName = try row.optional("Developer Name")
        productTypeIdentifier = try row.optional("Product Type Identifier")
        promoCode = try row.optional("Promo Code")
        orderType = try row.optional("Order Type")
        region = try row.optional("Region")
    }
}
