/// One row of Apple's consolidated Financial report (reportType FINANCIAL, region ZZ) for a fiscal month: a product's
/// units and proceeds in one country and currency. A return (refund) is `R` with a negative quantity and extended
/// partner share.
public struct FinancialReportRow: Sendable, Equatable {
    public var line: Int
    /// `YYYY-MM-DD`: the fiscal month's first and last day as the row states them.
    public var startDate: String
    public var endDate: String
    public var upc: String?
    public var isrcIsbn: String?
    /// The product id set in App Store Connect.
    public var vendorIdentifier: String
    /// The sale's product, country, units, proceeds and price.
    public var amounts: FinancialAmounts
    public var title: String?
    public var productTypeIdentifier: String?
    public var preOrderFlag: String?
    public var promoCode: String?

    static let requiredColumns = ["Start Date", "End Date", "Vendor Identifier"] + FinancialAmounts.requiredColumns

    /// Reads one data row (the consolidated Financial report's parser).
    init(_ row: AppleReportRowReader) throws(AppleReportError) {
        line = row.line
        startDate = try row.date("Start Date")
        endDate = try row.date("End Date")
        upc = try row.optional("UPC")
        isrcIsbn = try row.optional("ISRC/ISBN")
        vendorIdentifier = try row.required("Vendor Identifier")
        amounts = try FinancialAmounts(row)
        title = try row.optional("Title")
        productTypeIdentifier = try row.optional("Product Type Identifier")
        preOrderFlag = try row.optional("Pre-order Flag")
        promoCode = try row.optional("Promo Code")
    }
}
