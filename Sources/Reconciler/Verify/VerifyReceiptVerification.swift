import AppStoreClient
import Foundation
import ReceiptDomain

/// One receipt through verifyReceipt: the `VerificationAttempt` plan (the one `AttemptPlan`), a decision for
/// every usable answer and the plan's next step, both made where the answer arrives, off the pipeline's
/// queue; then the final outcome. Confined to the pipeline's queue except `perform`.
final class VerifyReceiptVerification: SourceVerification, @unchecked Sendable {
    private let source: VerifyReceiptSource
    private let item: WorkItem
    private var plan: VerificationAttempt
    /// Apple's status in the last answer (only that: the parsed answer itself is not kept once decided).
    private var lastAppleStatus: Int?
    private var decision: Decision?
    /// The wall clock `Retry-After` is measured on (the pipeline's, from `start(_:)`).
    private var date: @Sendable () -> Date = { Date() }

    init(source: VerifyReceiptSource, item: WorkItem) {
        self.source = source
        self.item = item
        // The row's known environment first (a Sandbox row would otherwise cost a production 21007 every
        // night); production when unknown. A wrong guess still switches once on 21007/21008
        // (docs/decision-rules.md).
        self.plan = VerificationAttempt(
            plan: AttemptContext.standard.plan(maxAttempts: source.maxAttempts, startingIn: item.stored.environment)
        )
    }

    func start(_ context: AttemptContext) -> SourceStep {
        plan = VerificationAttempt(
            plan: context.plan(maxAttempts: source.maxAttempts, startingIn: item.stored.environment)
        )
        date = context.date
        return start()
    }

    func start() -> SourceStep {
        if !item.rowExists {
            return finished(
                .rejected(
                    VerdictReason(
                        .subscriptionNotInReceipt,
                        detail: "subscription row deleted after the run selected it"
                    ),
                    invalidReceipt: false
                ),
                environment: nil,
                appleStatus: nil
            )
        }
        if item.receipt.isEmpty {
            return finished(
                .rejected(
                    VerdictReason(.receiptMalformedOrTemporary, detail: "stored latest_receipt is empty"),
                    invalidReceipt: true
                ),
                environment: nil,
                appleStatus: nil
            )
        }
        return step(plan.start())
    }

    func perform(_ request: SourceRequest, completion: @escaping @Sendable (SourceAnswer, VerifyAnswer) -> Void) {
        let item = self.item
        let now = source.now()
        let bundleId = source.bundleId
        let (plan, date) = (self.plan, self.date)
        source.client.send(receipt: item.receipt, to: request.environment ?? .production) { attempt in
            // On a global queue: decide here, off the pipeline's queue (the client has parsed the body), and the
            // plan's next step with it.
            var decision: Decision?
            if case .ok(let response) = attempt.verdict {
                decision = DecisionEngine.decide(stored: item.stored, response: response, now: now, bundleId: bundleId)
            }
            var planned = plan
            let step = planned.next(after: attempt.verdict, now: date())
            completion(
                SourceAnswer(
                    request: request,
                    httpStatus: attempt.httpStatus,
                    appleStatus: attempt.appleStatus,
                    transportFailure: attempt.transportFailure?.description,
                    tlsRefusal: attempt.transportFailure?.tlsRefusal,
                    throttled: attempt.httpStatus == 429 || attempt.httpStatus == 503,
                    notice: (attempt.sunset ?? attempt.deprecation).map {
                        "Apple announces the end of verifyReceipt (Sunset/Deprecation: \($0))"
                    }
                ),
                VerifyAnswer(attempt: attempt, decision: decision, plan: planned, step: step)
            )
        }
    }

    func next(after answer: SourceAnswer, _ verified: VerifyAnswer) -> SourceStep {
        lastAppleStatus = verified.attempt.appleStatus
        decision = verified.decision
        plan = verified.plan
        return step(verified.step)
    }

    // MARK: - Steps

    private func step(_ step: VerificationAttempt.Step) -> SourceStep {
        switch step {
        case .send(let environment):
            // After the first request, `send` is always an environment switch (retries come as `.retry`).
            return .send(
                SourceRequest(budget: source.budget, environment: environment, switchesEnvironment: plan.requests > 1)
            )
        case .retry(let environment, _, let wait, _):
            return .retry(SourceRequest(budget: source.budget, environment: environment), afterNanoseconds: wait)
        case .finished(let final):
            return complete(final)
        }
    }

    private func finished(_ kind: ItemResult.Kind, environment: AppleEnvironment?, appleStatus: Int?) -> SourceStep {
        .finished(SourceResult(kind: kind, environment: environment, appleStatus: appleStatus))
    }

    /// The item's outcome once the plan has finished, and whether it stops the run: Apple reported a
    /// configuration error, or this answer made 21004 (shared secret does not match) systematic.
    private func complete(_ final: VerificationAttempt.Final) -> SourceStep {
        let lastStatus = lastAppleStatus
        let evidence = systematicSecretEvidence(lastStatus)
        let result: SourceResult
        var configurationError: String?
        switch final {
        case .ok(_, let okEnvironment):
            guard let decision else {
                return finished(
                    .unresolved("internal: no decision for an ok response"),
                    environment: okEnvironment,
                    appleStatus: lastStatus
                )
            }
            result = decidedResult(decision, environment: okEnvironment, appleStatus: lastStatus)
        case .rejected(let reason):
            result = rejectedResult(reason, lastStatus: lastStatus)
        case .unresolved(let reason):
            // 21100-21199 marked not retryable ends here at once (the classifier's `unresolved`): row untouched.
            let tried =
                reason.code == .internalDataAccessPermanent ? "(not retried)" : "after \(plan.failures) attempts"
            result = SourceResult(
                kind: .unresolved("\(reason.code.rawValue): \(reason) \(tried)"),
                environment: plan.environment,
                appleStatus: reason.appleStatus ?? lastStatus
            )
        case .configurationError(let reason):
            source.logger.critical("Apple reports a configuration error: \(reason). Stopping the run.")
            result = SourceResult(
                kind: .unresolved("\(reason.code.rawValue): \(reason)"),
                environment: plan.environment,
                appleStatus: reason.appleStatus
            )
            configurationError = "\(reason.code.rawValue): \(reason)"
        }
        if let evidence {
            configurationError =
                configurationError
                ?? "the shared secret looks wrong: Apple answered 21004, shared secret does not match; \(evidence)"
        }
        if let configurationError { return .stopRun(result, configurationError: configurationError) }
        return .finished(result)
    }

    /// Notes the last answer's Apple status with the source; when that makes 21004 systematic, logs it and returns
    /// the evidence (nil otherwise).
    private func systematicSecretEvidence(_ lastStatus: Int?) -> String? {
        let evidence = lastStatus.flatMap(source.noteFinalAppleStatus)
        if let evidence {
            source.logger.critical(
                """
                Apple answers 21004 (shared secret does not match) systematically (\(evidence)): \
                the shared secret looks wrong. Stopping the run.
                """
            )
        }
        return evidence
    }

    /// An ok answer's decision: written, or a rejection when the decision engine rejected the receipt.
    private func decidedResult(_ decision: Decision, environment: AppleEnvironment, appleStatus: Int?) -> SourceResult {
        guard decision.outcome == .rejected else {
            return SourceResult(
                kind: .decided(decision),
                environment: decision.environment ?? environment,
                appleStatus: appleStatus
            )
        }
        let reason = decision.rejectReason ?? VerdictReason(.unknownStatus, detail: "rejected by the decision engine")
        return SourceResult(
            kind: .rejected(reason, invalidReceipt: false),
            environment: environment,
            appleStatus: appleStatus
        )
    }

    /// A final rejection: unresolved when 21004s are systematic, an ended entitlement for 21010, else rejected.
    private func rejectedResult(_ reason: VerdictReason, lastStatus: Int?) -> SourceResult {
        let environment = plan.environment
        let appleStatus = reason.appleStatus ?? lastStatus
        if reason.code == .sharedSecretMismatch && source.secretIsSystematic {
            // Not this receipt's problem: the secret is wrong for every receipt. Row untouched, due again.
            return SourceResult(
                kind: .unresolved(VerifyReceiptSource.secretLooksWrong(reason)),
                environment: environment,
                appleStatus: appleStatus
            )
        }
        if reason.code == .accountNotFound {
            // 21010: "treat as if a purchase was never made": the entitlement ends, written like any decision.
            let ended = DecisionEngine.accountNotFound(stored: item.stored, now: source.now(), environment: environment)
            return SourceResult(
                kind: .decided(ended),
                environment: ended.environment ?? environment,
                appleStatus: appleStatus
            )
        }
        return SourceResult(
            kind: .rejected(reason, invalidReceipt: reason.code == .invalidReceipt),
            environment: environment,
            appleStatus: appleStatus
        )
    }
}
