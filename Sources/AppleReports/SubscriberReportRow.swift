/// One row of Apple's Subscriber report (Sales and Trends SUBSCRIBER, DAILY, DETAILED, version 1_3): one subscription
/// transaction event on a Pacific-time day. A refund has a negative customer price and `Refund` Yes.
public struct SubscriberReportRow: Sendable, Equatable {
    public var line: Int
    /// `YYYY-MM-DD`, a Pacific-time day.
    public var eventDate: String
    /// App, subscription, group and standard duration.
    public var subscription: SalesReportSubscription
    public var subscriptionOfferName: String?
    public var promotionalOfferId: String?
    public var subscriptionOfferType: String?
    public var subscriptionOfferDuration: String?
    public var marketingOptInDuration: String?
    /// Price, proceeds, their currencies, preserved pricing and the proceeds reason.
    public var price: SalesReportPrice
    public var client: String?
    public var device: String?
    public var country: String
    public var subscriberId: String?
    public var subscriberIdReset: Bool
    public var refund: Bool
    public var purchaseDate: String?
    public var units: Int32

    /// The columns a Subscriber report must have; the others are read when present.
    static let requiredColumns = [
        "Event Date", "App Apple ID", "Subscription Apple ID", "Customer Price", "Customer Currency",
        "Developer Proceeds", "Proceeds Currency", "Country", "Units",
    ]

    /// Reads one data row (the Subscriber report's parser).
    init(_ row: AppleReportRowReader) throws(AppleReportError) {
        line = row.line
        eventDate = try row.date("Event Date")
        subscription = try SalesReportSubscription(row)
        subscriptionOfferName = try row.optional("Subscription Offer Name")
        promotionalOfferId = try row.optional("Promotional Offer ID")
        subscriptionOfferType = try row.optional("Subscription Offer Type")
        subscriptionOfferDuration = try row.optional("Subscription Offer Duration")
        marketingOptInDuration = try row.optional("Marketing Opt-In Duration")
        price = try SalesReportPrice(row)
        client = try row.optional("Client")
        device = try row.optional("Device")
        country = try row.country("Country")
        subscriberId = try row.optional("Subscriber ID")
        subscriberIdReset = try row.flag("Subscriber ID Reset")
        refund = try row.flag("Refund")
        purchaseDate = try row.optionalDate("Purchase Date")
        units = try row.integer("Units")
    }
}
