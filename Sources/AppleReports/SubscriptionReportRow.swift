/// One row of Apple's Subscription report (Sales and Trends SUBSCRIPTION, DAILY, SUMMARY, version 1_3): the
/// subscriptions active at the end of a Pacific day with the same subscription, offer, price, country and other
/// fields, counted by how the customer pays (`SubscriptionCounts`). The row has no date: the file's day is the
/// request's or the file name's (docs/apple-reports.md, "The Subscription report's day").
public struct SubscriptionReportRow: Sendable, Equatable {
    public var line: Int
    /// App, subscription, group and standard duration.
    public var subscription: SalesReportSubscription
    public var subscriptionOfferName: String?
    public var promotionalOfferId: String?
    /// Price, proceeds, their currencies, preserved pricing and the proceeds reason.
    public var price: SalesReportPrice
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
        subscription = try SalesReportSubscription(row)
        subscriptionOfferName = try row.optional("Subscription Offer Name")
        promotionalOfferId = try row.optional("Promotional Offer ID")
        price = try SalesReportPrice(row)
        client = try row.optional("Client")
        device = try row.optional("Device")
        state = try row.optional("State")
        country = try row.country("Country")
        counts = try SubscriptionCounts(row)
    }
}
