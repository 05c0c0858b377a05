/// The App Store Connect report files `apple-reports import` loads, recognised from their header line (never the
/// file name): docs/apple-reports.md lists each one's columns as Apple documents them.
public enum AppleReportKind: String, Sendable, CaseIterable {
    /// Sales and Trends, reportType SUBSCRIBER, DAILY, DETAILED: one row per subscription transaction event.
    case subscriber
    /// Financial report, reportType FINANCIAL (region ZZ, consolidated): proceeds per product and country.
    case financial
    /// Financial report, reportType FINANCE_DETAIL (region Z1): proceeds per transaction and settlement date.
    case financeDetail = "finance_detail"
    /// Sales and Trends, reportType SUBSCRIPTION_EVENT, DAILY, SUMMARY: event counts per subscription, offer and country.
    case subscriptionEvent = "subscription_event"
    /// Sales and Trends, reportType SUBSCRIPTION, DAILY, SUMMARY: active subscriptions at the end of a day. It has no
    /// date column: its day comes from the request or the file name (docs/apple-reports.md, "The Subscription
    /// report's day").
    case subscription

    /// What a finance person calls it, for messages.
    public var title: String {
        switch self {
        case .subscriber: "Subscriber report"
        case .financial: "Financial report (consolidated)"
        case .financeDetail: "Financial report (detailed)"
        case .subscriptionEvent: "Subscription Event report"
        case .subscription: "Subscription report"
        }
    }

    /// Whether its rows cover one Pacific day (Sales and Trends) rather than a fiscal month.
    public var isDaily: Bool {
        switch self {
        case .subscriber, .subscriptionEvent, .subscription: true
        case .financial, .financeDetail: false
        }
    }

    /// The kind whose header `columns` is (names compared without regard to case and surrounding spaces), or nil.
    public static func recognise(_ columns: [String]) -> AppleReportKind? {
        let names = Set(columns.map(AppleReportColumns.key))
        func has(_ wanted: String...) -> Bool { wanted.allSatisfy { names.contains(AppleReportColumns.key($0)) } }
        if has("Event Date", "Subscriber ID", "Customer Price", "Developer Proceeds") { return .subscriber }
        if has("Event Date", "Event", "Subscription Apple ID", "Quantity") { return .subscriptionEvent }
        if has("Subscription Apple ID", "Active Standard Price Subscriptions", "Subscribers") { return .subscription }
        if has("Transaction Date", "Settlement Date", "Extended Partner Share") { return .financeDetail }
        if has("Start Date", "End Date", "Vendor Identifier", "Extended Partner Share") { return .financial }
        return nil
    }
}
