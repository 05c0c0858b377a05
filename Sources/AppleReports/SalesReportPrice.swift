/// The money of a Subscriber or Subscription report row (docs/apple-reports.md): the customer's price and Apple's
/// proceeds, each with its currency (both in milliunits; a negative price is a refund), whether the renewal kept an
/// older price, and why the proceeds rate is what it is ("Rate After One Year").
public struct SalesReportPrice: Sendable, Equatable {
    public var customerPriceMilliunits: Int64
    public var customerCurrency: String
    public var developerProceedsMilliunits: Int64
    public var proceedsCurrency: String
    public var preservedPricing: Bool
    public var proceedsReason: String?

    /// Reads them from one data row; the four amounts and currencies are required.
    init(_ row: AppleReportRowReader) throws(AppleReportError) {
        customerPriceMilliunits = try row.milliunits("Customer Price")
        customerCurrency = try row.currency("Customer Currency")
        developerProceedsMilliunits = try row.milliunits("Developer Proceeds")
        proceedsCurrency = try row.currency("Proceeds Currency")
        preservedPricing = try row.flag("Preserved Pricing")
        proceedsReason = try row.optional("Proceeds Reason")
    }

    /// Their columns in the Subscriber and Subscription reports' tables.
    static func columns(_ values: [SalesReportPrice]) -> [AppleReportStoredColumn] {
        [
            .init("customer_price_milliunits", "bigint", values) { $0.customerPriceMilliunits },
            .init("customer_currency", "text", values) { $0.customerCurrency },
            .init("developer_proceeds_milliunits", "bigint", values) { $0.developerProceedsMilliunits },
            .init("proceeds_currency", "text", values) { $0.proceedsCurrency },
            .init("preserved_pricing", "boolean", values) { $0.preservedPricing },
            .init("proceeds_reason", "text", values) { $0.proceedsReason },
        ]
    }
}
