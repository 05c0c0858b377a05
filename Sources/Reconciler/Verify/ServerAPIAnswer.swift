import AppStoreClient
import Foundation
import ReceiptDomain

/// The Server API source's view of one answer (`SourceVerification.Answer`):
/// the HTTP result and, for a 200, what its signed data says once verified (made off the pipeline's queue).
struct ServerAPIAnswer: Sendable {
    /// Get All Subscription Statuses, verified: the subscription's latest transaction and renewal info.
    struct Status: Sendable {
        var status: Int?
        var group: String?
        var transaction: ReceiptTransaction
        var signedTransaction: String
        var renewal: PendingRenewalInfo?
        var signedRenewal: String?
    }

    /// What a Get All Subscription Statuses body says of one subscription, once verified
    /// (`ServerAPIVerification.readStatuses`, for the run and for `explain` alike).
    enum StatusReading: Sendable {
        case found(Status)
        /// The body is not believed: its shape, a signature, an environment or a value out of bounds.
        case refused(VerdictReason)
        /// The subscription is not in the body.
        case absent
    }

    /// One page of Get Transaction History, verified: the subscription's transactions on it.
    struct HistoryPage: Sendable {
        var transactions: [ReceiptTransaction]
        var revision: String?
        var hasMore: Bool
    }

    let attempt: ServerAPIAttemptResult
    var status: Status?
    var page: HistoryPage?
    /// The decision, when this answer is the last one the item needs (made where it arrived, off the pipeline's
    /// queue, docs/architecture.md "The App Store Server API").
    var decision: Decision?
    /// Why the answer is not believed (a JWS failed verification, the body is not Apple's shape, the
    /// subscription is not in it), when it is not.
    var refusal: VerdictReason?
}
