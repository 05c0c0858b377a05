/// A report file read and checked whole, ready to store: its kind, checksum, period and typed rows.
public struct AppleReportContents: Sendable {
    /// The typed rows of the file's kind.
    public enum Rows: Sendable {
        case subscriber([SubscriberReportRow])
        case financial([FinancialReportRow])
        case financeDetail([FinanceDetailReportRow])
        case subscriptionEvent([SubscriptionEventReportRow])
        case subscription([SubscriptionReportRow])

        public var count: Int {
            switch self {
            case .subscriber(let rows): rows.count
            case .financial(let rows): rows.count
            case .financeDetail(let rows): rows.count
            case .subscriptionEvent(let rows): rows.count
            case .subscription(let rows): rows.count
            }
        }
    }

    /// The file as the caller named it.
    public let file: String
    public let kind: AppleReportKind
    /// SHA-256 (hex) of the decompressed text: the same report gzip or plain is the same file.
    public let sha256: String
    /// Whether the file was gzip-compressed.
    public let compressed: Bool
    public let rows: Rows
    /// `YYYY-MM-DD`: the first and last day the rows cover (nil for a file without rows).
    public let periodStart: String?
    public let periodEnd: String?
    /// Financial reports: `YYYY-MM`, the name of the Apple fiscal month holding the period's last day.
    public let fiscalMonth: String?
}
