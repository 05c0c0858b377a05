/// App Store Server Notifications a run read (`app_store_notifications.first_seen_run_id`): counts by
/// type, and the subscriptions they name that the database does not know. The `notifications` object of
/// summary.json (docs/reports.md); empty (zero) for runs that read none, e.g. verifyReceipt runs.
public struct ReportNotifications: Sendable, Equatable, Codable {
    /// Notifications first seen in the run.
    public var total: Int
    /// `notification_type` -> notifications first seen in the run.
    public var byType: [String: Int]
    /// Original transaction ids named by those notifications whose subscription was not in `subscriptions`
    /// when they were read (`subscription_known` false): distinct, sorted.
    public var unknownSubscriptions: [String]
    /// Notifications of a type Apple did not document when this version was written (`AppleNotificationType`):
    /// stored as they came, not acted on. nil in summaries written before it was counted.
    public var notUnderstood: Int?
    /// Refund requests (`CONSUMPTION_REQUEST`) first seen in the run, oldest first, with what followed; nil in
    /// summaries written before they were listed.
    public var refundRequests: [ReportRefundRequest]?

    enum CodingKeys: String, CodingKey {
        case total
        case byType = "by_type"
        case unknownSubscriptions = "unknown_subscriptions"
        case notUnderstood = "not_understood"
        case refundRequests = "refund_requests"
    }

    public init(
        byType: [String: Int] = [:],
        unknownSubscriptions: [String] = [],
        refundRequests: [ReportRefundRequest] = []
    ) {
        self.total = byType.values.reduce(0, +)
        self.refundRequests = refundRequests
        self.byType = byType
        self.unknownSubscriptions = unknownSubscriptions
        notUnderstood = byType.filter { !AppleNotificationType.isUnderstood($0.key) }.values.reduce(0, +)
    }
}
