/// One row of Apple's Subscriber report (Sales and Trends SUBSCRIBER, DAILY, DETAILED, version 1_3): one subscription
/// transaction event on a Pacific-time day. A refund has a negative customer price and `Refund` Yes.
public struct SubscriberReportRow: Sendable, Equatable {
    public var line: Int
    /// `YYYY-MM-DD`, a Pacific-time day.
    public var eventDate: String
    public var appName: String?
    public var appAppleId: String
    public var subscriptionName: String?
    public var subscriptionAppleId: String
    public var subscriptionGroupId: String?
    public var standardSubscriptionDuration: String?
    public var subscriptionOfferName: String?
    public var promotionalOfferId: String?
    public var subscriptionOfferType: String?
    public var subscriptionOfferDuration: String?
    public var marketingOptInDuration: String?
    public var customerPriceMilliunits: Int64
    public var customerCurrency: String
    public var developerProceedsMilliunits: Int64
    public var proceedsCurrency: String
    public var preservedPricing: Bool
    public var proceedsReason: String?
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
        appName = try row.optional("App Name")
        appAppleId = try row.required("App Apple ID")
        subscriptionName = try row.optional("Subscription Name")
        subscriptionAppleId = try row.required("Subscription Apple ID")
        subscriptionGroupId = try row.optional("Subscription Group ID")
        standardSubscriptionDuration = try row.optional("Standard Subscription Duration")
        subscriptionOfferName = try row.optional("Subscription Offer Name")
        promotionalOfferId = try row.optional("Promotional Offer ID")
        subscriptionOfferType = try row.optional("Subscription Offer Type")
        subscriptionOfferDuration = try row.optional("Subscription Offer Duration")
        marketingOptInDuration = try row.optional("Marketing Opt-In Duration")
        customerPriceMilliunits = try row.milliunits("Customer Price")
        customerCurrency = try row.currency("Customer Currency")
        developerProceedsMilliunits = try row.milliunits("Developer Proceeds")
        proceedsCurrency = try row.currency("Proceeds Currency")
        preservedPricing = try row.flag("Preserved Pricing")
        proceedsReason = try row.optional("Proceeds Reason")
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
