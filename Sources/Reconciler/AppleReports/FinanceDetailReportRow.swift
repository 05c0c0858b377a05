/// One row of Apple's detailed Financial report (reportType FINANCE_DETAIL, region Z1): proceeds by transaction and
/// settlement date within a fiscal month. A return (refund) is `R` with a negative quantity and extended partner share.
public struct FinanceDetailReportRow: Sendable, Equatable {
    public var line: Int
    /// `YYYY-MM-DD`: when the customer was charged (or refunded), and when Apple settled it.
    public var transactionDate: String
    public var settlementDate: String
    public var appleIdentifier: String
    /// The product id set in App Store Connect.
    public var sku: String
    public var title: String?
    public var developerName: String?
    public var productTypeIdentifier: String?
    public var countryOfSale: String
    public var quantity: Int32
    public var partnerShareMilliunits: Int64
    public var extendedPartnerShareMilliunits: Int64
    public var partnerShareCurrency: String
    public var customerPriceMilliunits: Int64
    public var customerCurrency: String
    /// `S` sale, `R` return.
    public var saleOrReturn: AppleSaleOrReturn
    public var promoCode: String?
    public var orderType: String?
    public var region: String?

    static let requiredColumns = [
        "Transaction Date", "Settlement Date", "Apple Identifier", "SKU", "Country of Sale", "Quantity",
        "Partner Share", "Extended Partner Share", "Partner Share Currency", "Customer Price", "Customer Currency",
        "Sale or Return",
    ]

    /// Reads one data row (the detailed Financial report's parser).
    init(_ row: AppleReportRowReader) throws(AppleReportError) {
        line = row.line
        transactionDate = try row.date("Transaction Date")
        settlementDate = try row.date("Settlement Date")
        appleIdentifier = try row.required("Apple Identifier")
        sku = try row.required("SKU")
        title = try row.optional("Title")
        developerName = try row.optional("Developer Name")
        productTypeIdentifier = try row.optional("Product Type Identifier")
        countryOfSale = try row.country("Country of Sale")
        quantity = try row.integer("Quantity")
        partnerShareMilliunits = try row.milliunits("Partner Share")
        extendedPartnerShareMilliunits = try row.milliunits("Extended Partner Share")
        partnerShareCurrency = try row.currency("Partner Share Currency")
        customerPriceMilliunits = try row.milliunits("Customer Price")
        customerCurrency = try row.currency("Customer Currency")
        saleOrReturn = try row.saleOrReturn("Sale or Return")
        promoCode = try row.optional("Promo Code")
        orderType = try row.optional("Order Type")
        region = try row.optional("Region")
    }
}
