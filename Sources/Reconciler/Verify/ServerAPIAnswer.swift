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

        /// The token of the page that follows, when Apple says there is one (and gave its token).
        var nextRevision: String? { hasMore ? revision : nil }
    }

    /// What a Get Transaction History page says of one subscription, once verified
    /// (`ServerAPIVerification.readHistoryPage`, for the run and for `explain` alike).
    enum HistoryReading: Sendable {
        case found(HistoryPage)
        /// The page is not believed: its shape, a signature or a value out of bounds.
        case refused(VerdictReason)
    }

    /// The item's plan after this answer, and its next step (made where the answer arrived).
    struct Planned: Sendable {
        let plan: AttemptPlan
        let step: AttemptPlan.Step
    }

    let attempt: ServerAPIAttemptResult
    /// True for Get All Subscription Statuses, false for a history page.
    let isStatuses: Bool
    var status: Status?
    var page: HistoryPage?
    /// The decision, when this answer is the last one the item needs (made where it arrived, off the pipeline's
    /// queue, docs/architecture.md "The App Store Server API").
    var decision: Decision?
    /// Why the answer is not believed (a JWS failed verification, the body is not Apple's shape, the
    /// subscription is not in it), when it is not.
    var refusal: VerdictReason?
    /// The plan's next step, when the answer is one the plan decides on (usable, another environment, worth
    /// another try); nil for a verdict (a refusal, a 401, a failure that is final).
    private(set) var planned: Planned?

    init(attempt: ServerAPIAttemptResult, isStatuses: Bool) {
        self.attempt = attempt
        self.isStatuses = isStatuses
    }

    /// This answer with the plan's next step after it (`plan` as it stood when the request left).
    func planned(_ plan: AttemptPlan, now: Date) -> ServerAPIAnswer {
        guard let answer = planAnswer else { return self }
        var plan = plan
        let step = plan.next(after: answer, now: now)
        var copy = self
        copy.planned = Planned(plan: plan, step: step)
        return copy
    }

    /// What this answer is to the plan: a usable one (the next history page's token), the other environment
    /// (4040010 on statuses), or one worth another try (a 429 or a retryable error, a 200 that is not Apple's
    /// shape); nil for a verdict.
    private var planAnswer: AttemptPlan.Answer? {
        switch attempt.classification {
        case .success:
            if refusal?.code == .malformedResponse { return .retryable(notBefore: attempt.retryAfter) }
            if refusal != nil { return nil }
            if isStatuses { return status == nil ? nil : .usable(nextPage: nil) }
            return page.map { .usable(nextPage: $0.nextRevision) }
        case .notFound: return isStatuses ? .wrongEnvironment(attempt.environment.other) : nil
        case .rateLimited, .retryable: return .retryable(notBefore: attempt.retryAfter)
        case .unauthorized, .failed: return nil
        }
    }
}
