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
    public var quantity: Int32
    /// Proceeds per unit, and for the row (quantity x partner share), in the partner share currency.
    public var partnerShareMilliunits: Int64
    public var extendedPartnerShareMilliunits: Int64
    public var partnerShareCurrency: String
    /// `S` sale, `R` return.
    public var saleOrReturn: AppleSaleOrReturn
    public var appleIdentifier: String
    public var title: String?
    public var productTypeIdentifier: String?
    public var countryOfSale: String
    public var preOrderFlag: String?
    public var promoCode: String?
    public var customerPriceMilliunits: Int64
    public var customerCurrency: String

    static let requiredColumns = [
        "Start Date", "End Date", "Vendor Identifier", "Quantity", "Partner Share", "Extended Partner Share",
        "Partner Share Currency", "Sale or Return", "Apple Identifier", "Country of Sale", "Customer Price",
        "Customer Currency",
    ]

    /// Reads one data row (the consolidated Financial report's parser).
    init(_ row: AppleReportRowReader) throws(AppleReportError) {
        line = row.line
        startDate = try row.date("Start Date")
        endDate = try row.date("End Date")
        upc = try row.optional("UPC")
        isrcIsbn = try row.optional("ISRC/ISBN")
        vendorIdentifier = try row.required("Vendor Identifier")
        quantity = try row.integer("Quantity")
        partnerShareMilliunits = try row.milliunits("Partner Share")
        extendedPartnerShareMilliunits = try row.milliunits("Extended Partner Share")
        partnerShareCurrency = try row.currency("Partner Share Currency")
        saleOrReturn = try row.saleOrReturn("Sale or Return")
        appleIdentifier = try row.required("Apple Identifier")
        title = try row.optional("Title")
        productTypeIdentifier = try row.optional("Product Type Identifier")
        countryOfSale = try row.country("Country of Sale")
        preOrderFlag = try row.optional("Pre-order Flag")
        promoCode = try row.optional("Promo Code")
        customerPriceMilliunits = try row.milliunits("Customer Price")
        customerCurrency = try row.currency("Customer Currency")
    }
}
