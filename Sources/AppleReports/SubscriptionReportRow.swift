/// One row of Apple's Subscription report (Sales and Trends SUBSCRIPTION, DAILY, SUMMARY, version 1_3): the
/// subscriptions active at the end of a Pacific day with the same subscription, offer, price, country and other
/// fields, counted by how the customer pays (`SubscriptionCounts`). The row has no date: the file's day is the
/// request's or the file name's (docs/apple-reports.md, "The Subscription report's day").
public struct SubscriptionReportRow: Sendable, Equatable {
    public var line: Int
    public var appName: String?
    public var appAppleId: String
    public var subscriptionName: String?
    public var subscriptionAppleId: String
    public var subscriptionGroupId: String?
    public var standardSubscriptionDuration: String?
    public var subscriptionOfferName: String?
    public var promotionalOfferId: String?
    public var customerPriceMilliunits: Int64
    public var customerCurrency: String
    public var developerProceedsMilliunits: Int64
    public var proceedsCurrency: String
    public var preservedPricing: Bool
    public var proceedsReason: String?
    public var client: String?
    public var device: String?
    public var state: String?
    public var country: String
    public var counts: SubscriptionCounts

    /// The columns a Subscription report must have; the others are read when present.
    static let requiredColumns = [
        "App Apple ID", "Subscription Apple ID", "Customer Price", "Customer Currency", "Developer Proceeds",
        "Proceeds Currency", "Country", "Active Standard Price Subscriptions", "Subscribers",
    ]

    /// Reads one data row (the Subscription report's parser).
    init(_ row: AppleReportRowReader) throws(AppleReportError) {
        line = row.line
        appName = try row.optional("App Name")
        appAppleId = try row.required("App Apple ID")
        subscriptionName = try row.optional("Subscription Name")
        subscriptionAppleId = try row.required("Subscription Apple ID")
        subscriptionGroupId = try row.optional("Subscription Group ID")
        standardSubscriptionDuration = try row.optional("Standard Subscription Duration")
        subscriptionOfferName = try row.optional("Subscription Offer Name")
        promotionalOfferId = try row.optional("Promotional Offer ID")
        customerPriceMilliunits = try row.milliunits("Customer Price")
        customerCurrency = try row.currency("Customer Currency")
        developerProceedsMilliunits = try row.milliunits("Developer Proceeds")
        proceedsCurrency = try row.currency("Proceeds Currency")
        preservedPricing = try row.flag("Preserved Pricing")
        proceedsReason = try row.optional("Proceeds Reason")
        client = try row.optional("Client")
        device = try row.optional("Device")
        state = try row.optional("State")
        country = try row.country("Country")
        counts = try SubscriptionCounts(row)
    }
}
