import CivilTime
import Foundation

/// A customer's refund request Apple told the app about (`CONSUMPTION_REQUEST`), first seen in the run: Apple asks
/// the app for consumption information within 12 hours of the notification, and decides the refund after
/// (docs/reports.md, "Refund requests"). One entry of summary.json's `notifications.refund_requests`.
public struct ReportRefundRequest: Sendable, Equatable, Codable {
    /// How long after Apple's notification the app may still send consumption information.
    public static let answerWindow: TimeInterval = 12 * 3600

    public enum Outcome: String, Sendable, Codable {
        /// No refund or refusal notification for the transaction has been read since the request.
        case open
        /// A `REFUND` followed for the transaction.
        case refunded
        /// A `REFUND_DECLINED` followed for the transaction.
        case declined
    }

    public var transactionId: String
    public var originalTransactionId: String?
    /// When Apple signed the notification (the request's time), RFC 3339 UTC.
    public var requestedAt: String
    /// `requestedAt` plus the 12 hours Apple allows for the answer, RFC 3339 UTC.
    public var answerBy: String
    public var outcome: Outcome

    enum CodingKeys: String, CodingKey {
        case transactionId = "transaction_id"
        case originalTransactionId = "original_transaction_id"
        case requestedAt = "requested_at"
        case answerBy = "answer_by"
        case outcome
    }

    public init(transactionId: String, originalTransactionId: String?, requestedAt: Date, outcome: Outcome) {
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.requestedAt = RFC3339.string(requestedAt)
        self.answerBy = RFC3339.string(requestedAt.addingTimeInterval(Self.answerWindow))
        self.outcome = outcome
    }
}
