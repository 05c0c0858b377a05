/// The fields that name the subscription in each Sales and Trends subscription report (Subscriber, Subscription,
/// Subscription Event; docs/apple-reports.md): the app, the subscription and its group, and its standard duration.
public struct SalesReportSubscription: Sendable, Equatable {
    public var appName: String?
    public var appAppleId: String
    public var subscriptionName: String?
    /// Apple's id of the subscription (not the product id: the tie-out maps it, docs/tie-out.md).
    public var subscriptionAppleId: String
    public var subscriptionGroupId: String?
    public var standardSubscriptionDuration: String?

    /// Reads them from one data row; App Apple ID and Subscription Apple ID are required.
    init(_ row: AppleReportRowReader) throws(AppleReportError) {
        appName = try row.optional("App Name")
        appAppleId = try row.required("App Apple ID")
        subscriptionName = try row.optional("Subscription Name")
        subscriptionAppleId = try row.required("Subscription Apple ID")
        subscriptionGroupId = try row.optional("Subscription Group ID")
        standardSubscriptionDuration = try row.optional("Standard Subscription Duration")
    }

    /// Their columns in each report's table (`sql/021_apple_reports.sql`, `sql/023_subscription_reports.sql`).
    static func columns(_ values: [SalesReportSubscription]) -> [AppleReportStoredColumn] {
        [
            .init("app_name", "text", values) { $0.appName },
            .init("app_apple_id", "text", values) { $0.appAppleId },
            .init("subscription_name", "text", values) { $0.subscriptionName },
            .init("subscription_apple_id", "text", values) { $0.subscriptionAppleId },
            .init("subscription_group_id", "text", values) { $0.subscriptionGroupId },
            .init("standard_subscription_duration", "text", values) { $0.standardSubscriptionDuration },
        ]
    }
}
