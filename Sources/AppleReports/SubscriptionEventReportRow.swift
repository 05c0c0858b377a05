/// One row of Apple's Subscription Event report (Sales and Trends SUBSCRIPTION_EVENT, DAILY, SUMMARY, version 1_3):
/// how many subscription events of one kind (`Event`: Subscribe, Renew, Cancel, Refund, ...) happened on a
/// Pacific-time day with the same subscription, offer, country and other fields (`Quantity`). Columns as
/// docs/apple-reports.md lists them.
public struct SubscriptionEventReportRow: Sendable, Equatable {
    public var line: Int
    /// `YYYY-MM-DD`, a Pacific-time day.
    public var eventDate: String
    /// Apple's event name, as written (docs/apple-reports.md, "Subscription Event report").
    public var event: String
    /// App, subscription, group and standard duration.
    public var subscription: SalesReportSubscription
    public var subscriptionOfferType: String?
    public var subscriptionOfferDuration: String?
    public var marketingOptIn: Bool
    public var marketingOptInDuration: String?
    public var preservedPricing: Bool
    public var proceedsReason: String?
    public var subscriptionOfferName: String?
    public var promotionalOfferId: String?
    public var consecutivePaidPeriods: Int32?
    /// `YYYY-MM-DD`: when the subscription began.
    public var originalStartDate: String?
    public var client: String?
    public var device: String?
    public var state: String?
    public var country: String
    public var previousSubscriptionName: String?
    public var previousSubscriptionAppleId: String?
    public var daysBeforeCanceling: Int32?
    public var cancellationReason: String?
    public var daysCanceled: Int32?
    public var quantity: Int32

    /// The columns a Subscription Event report must have; the others are read when present.
    static let requiredColumns = [
        "Event Date", "Event", "App Apple ID", "Subscription Apple ID", "Country", "Quantity",
    ]

    /// Reads one data row (the Subscription Event report's parser).
    init(_ row: AppleReportRowReader) throws(AppleReportError) {
        line = row.line
        eventDate = try row.date("Event Date")
        event = try row.required("Event")
        subscription = try SalesReportSubscription(row)
        subscriptionOfferType = try row.optional("Subscription Offer Type")
        subscriptionOfferDuration = try row.optional("Subscription Offer Duration")
        marketingOptIn = try row.flag("Marketing Opt-In")
        marketingOptInDuration = try row.optional("Marketing Opt-In Duration")
        preservedPricing = try row.flag("Preserved Pricing")
        proceedsReason = try row.optional("Proceeds Reason")
        subscriptionOfferName = try row.optional("Subscription Offer Name")
        promotionalOfferId = try row.optional("Promotional Offer ID")
        consecutivePaidPeriods = try row.optionalInteger("Consecutive Paid Periods")
        originalStartDate = try row.optionalDate("Original Start Date")
        client = try row.optional("Client")
        device = try row.optional("Device")
        state = try row.optional("State")
        country = try row.country("Country")
        previousSubscriptionName = try row.optional("Previous Subscription Name")
        previousSubscriptionAppleId = try row.optional("Previous Subscription Apple ID")
        daysBeforeCanceling = try row.optionalInteger("Days Before Canceling")
        cancellationReason = try row.optional("Cancellation Reason")
        daysCanceled = try row.optionalInteger("Days Canceled")
        quantity = try row.integer("Quantity")
    }
}
