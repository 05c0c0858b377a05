/// Everything one run's report is built from, read from PostgreSQL by `ReportLoader`.
///
/// A plain value so that the summary, the CSVs, the HTML page and the metrics are pure functions
/// of it (and testable without a database).
public struct ReportData: Sendable, Equatable {
    public var run: ReportRun
    public var items: [ReportItem]
    public var transactions: [ReportTransaction]
    public var prices: [ProductPrice]
    /// App Store Server Notifications first seen in the run.
    public var notifications = ReportNotifications()
    /// How money is estimated and converted (command-line flags).
    public var moneyOptions = ReportMoneyOptions()

}
