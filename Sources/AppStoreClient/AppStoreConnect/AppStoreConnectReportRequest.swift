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
    }

    public let report: Report
    /// `YYYY-MM-DD` (a Pacific day) for the Subscriber report; for the Financial reports the fiscal year and
    /// period `YYYY-MM` (`2027-01` is the fiscal October that begins in late September 2026).
    public let reportDate: String
    public let vendorNumber: String
    /// The Subscriber report's version (Apple's table names 1_3).
    public let version: String

    public init(report: Report, reportDate: String, vendorNumber: String, version: String = "1_3") {
        self.report = report
        self.reportDate = reportDate
        self.vendorNumber = vendorNumber
        self.version = version
    }

    /// The path under the API's base URL.
    public var path: String {
        report == .subscriber ? "/v1/salesReports" : "/v1/financeReports"
    }

    /// The query parameters, in the order they are sent.
    public var query: [(String, String)] {
        switch report {
        case .subscriber:
            return [
                ("filter[frequency]", "DAILY"), ("filter[reportDate]", reportDate),
                ("filter[reportSubType]", "DETAILED"), ("filter[reportType]", "SUBSCRIBER"),
                ("filter[vendorNumber]", vendorNumber), ("filter[version]", version),
            ]
        case .financial, .financeDetail:
            return [
                ("filter[regionCode]", report == .financial ? "ZZ" : "Z1"), ("filter[reportDate]", reportDate),
                ("filter[reportType]", report == .financial ? "FINANCIAL" : "FINANCE_DETAIL"),
                ("filter[vendorNumber]", vendorNumber),
            ]
        }
    }

    /// How logs and the command's lines name it: `subscriber 2026-11-20`, `financial 2027-02`.
    public var label: String { "\(report.rawValue) \(reportDate)" }
}
