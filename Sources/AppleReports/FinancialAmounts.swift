/// What both Financial reports (consolidated and detailed) say of a row's sale: the product's Apple id, the country,
/// the units and Apple's proceeds for them, the customer's price, and whether it was a sale or a return. One parser
/// for the columns the two reports share (docs/apple-reports.md).
public struct FinancialAmounts: Sendable, Equatable {
    public var appleIdentifier: String
    public var countryOfSale: String
    /// Negative for a return.
    public var quantity: Int32
    /// Proceeds per unit, and for the row (quantity x partner share), in the partner share currency.
    public var partnerShareMilliunits: Int64
    public var extendedPartnerShareMilliunits: Int64
    public var partnerShareCurrency: String
    public var customerPriceMilliunits: Int64
    public var customerCurrency: String
    /// `S` sale, `R` return.
    public var saleOrReturn: AppleSaleOrReturn

    static let requiredColumns = [
        "Apple Identifier", "Country of Sale", "Quantity", "Partner Share", "Extended Partner Share",
        "Partner Share Currency", "Customer Price", "Customer Currency", "Sale or Return",
    ]

    init(_ row: AppleReportRowReader) throws(AppleReportError) {
        appleIdentifier = try row.required("Apple Identifier")
        countryOfSale = try row.country("Country of Sale")
        quantity = try row.integer("Quantity")
        partnerShareMilliunits = try row.milliunits("Partner Share")
        extendedPartnerShareMilliunits = try row.milliunits("Extended Partner Share")
        partnerShareCurrency = try row.currency("Partner Share Currency")
        customerPriceMilliunits = try row.milliunits("Customer Price")
        customerCurrency = try row.currency("Customer Currency")
        saleOrReturn = try row.saleOrReturn("Sale or Return")
    }
}
