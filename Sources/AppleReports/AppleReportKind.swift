/// The App Store Connect report files `apple-reports import` loads, recognised from their header line (never the
/// file name): docs/apple-reports.md lists each one's columns as Apple documents them.
public enum AppleReportKind: String, Sendable, CaseIterable {
    /// Sales and Trends, reportType SUBSCRIBER, DAILY, DETAILED: one row per subscription transaction event.
    case subscriber
    /// Financial report, reportType FINANCIAL (region ZZ, consolidated): proceeds per product and country.
    case financial
    /// Financial report, reportType FINANCE_DETAIL (region Z1): proceeds per transaction and settlement date.
    case financeDetail = "finance_detail"

    /// What a finance person calls it, for messages.
    public var title: String {
        switch self {
        case .subscriber: "Subscriber report"
        case .financial: "Financial report (consolidated)"
        case .financeDetail: "Financial report (detailed)"
        }
    }

    /// The kind whose header `columns` is (names compared without regard to case and surrounding spaces), or nil.
    public static func recognise(_ columns: [String]) -> AppleReportKind? {
        let names = Set(columns.map(AppleReportColumns.key))
        func has(_ wanted: String...) -> Bool { wanted.allSatisfy { names.contains(AppleReportColumns.key($0)) } }
        if has("Event Date", "Subscriber ID", "Customer Price", "Developer Proceeds") { return .subscriber }
        if has("Transaction Date", "Settlement Date", "Extended Partner Share") { return .financeDetail }
        if has("Start Date", "End Date", "Vendor Identifier", "Extended Partner Share") { return .financial }
        return nil
    }
}
