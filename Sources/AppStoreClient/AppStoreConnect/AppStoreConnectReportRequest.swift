/// One report download from the App Store Connect API (docs/apple-reports.md, "Downloading"): which endpoint and
/// which `filter[...]` parameters Apple's "Download Sales and Trends Reports" and "Download Finance Reports" ask for.
public struct AppStoreConnectReportRequest: Sendable, Equatable, Hashable {
    /// The reports this project downloads.
    public enum Report: String, Sendable, Equatable, Hashable, CaseIterable {
        /// Sales and Trends, Subscriber report (daily, detailed): one Pacific day.
        case subscriber
        /// Payments and Financial Reports, consolidated (`FINANCIAL`, region `ZZ`): one fiscal month.
        case financial
        /// Payments and Financial Reports, detailed (`FINANCE_DETAIL`, region `Z1`): one fiscal month.
        case financeDetail = "finance_detail"
        /// Sales and Trends, Subscription Event report (`SUBSCRIPTION_EVENT`, daily, summary): one Pacific day.
        case subscriptionEvent = "subscription_event"
        /// Sales and Trends, Subscription report (`SUBSCRIPTION`, daily, summary): one Pacific day.
        case subscription

        /// A Sales and Trends report of one Pacific day (`/v1/salesReports`), not a Financial report of a month.
        public var isDaily: Bool {
            switch self {
            case .subscriber, .subscriptionEvent, .subscription: true
            case .financial, .financeDetail: false
            }
        }
    }

    public let report: Report
    /// `YYYY-MM-DD` (a Pacific day) for the Sales and Trends reports; for the Financial reports the fiscal year and
    /// period `YYYY-MM` (`2027-01` is the fiscal October that begins in late September 2026).
    public let reportDate: String
    public let vendorNumber: String
    /// The Sales and Trends reports' version (Apple's tables name 1_3).
    public let version: String

    public init(report: Report, reportDate: String, vendorNumber: String, version: String = "1_3") {
        self.report = report
        self.reportDate = reportDate
        self.vendorNumber = vendorNumber
        self.version = version
    }

    /// The path under the API's base URL.
    public var path: String {
        report.isDaily ? "/v1/salesReports" : "/v1/financeReports"
    }

    /// The query parameters, in the order they are sent.
    public var query: [(String, String)] {
        let sales: (type: String, subType: String)
        switch report {
        case .subscriber: sales = ("SUBSCRIBER", "DETAILED")
        case .subscriptionEvent: sales = ("SUBSCRIPTION_EVENT", "SUMMARY")
        case .subscription: sales = ("SUBSCRIPTION", "SUMMARY")
        case .financial, .financeDetail:
            return [
                ("filter[regionCode]", report == .financial ? "ZZ" : "Z1"), ("filter[reportDate]", reportDate),
                ("filter[reportType]", report == .financial ? "FINANCIAL" : "FINANCE_DETAIL"),
                ("filter[vendorNumber]", vendorNumber),
            ]
        }
        return [
            ("filter[frequency]", "DAILY"), ("filter[reportDate]", reportDate),
            ("filter[reportSubType]", sales.subType), ("filter[reportType]", sales.type),
            ("filter[vendorNumber]", vendorNumber), ("filter[version]", version),
        ]
    }

    /// How logs and the command's lines name it: `subscriber 2026-11-20`, `financial 2027-02`.
    public var label: String { "\(report.rawValue) \(reportDate)" }
}
