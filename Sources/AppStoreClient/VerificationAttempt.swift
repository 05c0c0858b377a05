import Foundation
import ReceiptDomain

/// The request plan for verifying one receipt: verifyReceipt's reading of the one `AttemptPlan`
/// (docs/decision-rules.md, "Retries and backoff"). The row's environment (else production) first, at most
/// one switch (21007 -> sandbox, 21008 -> production), bounded retries spaced by the plan's backoff and
/// Apple's `Retry-After`. What is verifyReceipt's own: 21002 through the whole budget is a verdict on the
/// receipt (`invalid_receipt`), and the plan's ends become verifyReceipt verdicts. Pure: the caller sends
/// what `next(after:now:)` says, so every request can pass the caller's rate limiter, and waits itself.
public struct VerificationAttempt: Sendable {
    /// What the caller does next.
    public enum Step: Sendable, Equatable {
        /// Send the receipt to this environment now (subject to the rate limiter).
        case send(AppleEnvironment)
        /// Send again to `environment` after `afterNanoseconds` (the plan's backoff, never shorter than Apple's
        /// `Retry-After`); `failures` retryable failures so far (1 for the first retry).
        case retry(AppleEnvironment, failures: Int, afterNanoseconds: UInt64, reason: VerdictReason)
        /// Done.
        case finished(Final)
    }

    /// How the verification ended.
    public enum Final: Sendable, Equatable {
        /// Apple answered 0/21006 from `environment`: decide from the response.
        case ok(VerifyReceiptResponse, environment: AppleEnvironment)
        /// Permanent for this receipt (21003, 21010, a switch loop, 21002 through the whole budget, ...).
        case rejected(VerdictReason)
        /// Retryable failures used up the budget (or Apple asked to wait too long), or Apple's error said not to
        /// retry: nothing is known, change nothing.
        case unresolved(VerdictReason)
        /// Our configuration is wrong (21004 shared secret, 21000): stop the run.
        case configurationError(VerdictReason)
    }

    public private(set) var plan: AttemptPlan
    /// True while every failure so far was Apple's 21002 (malformed receipt or temporary issue).
    private var only21002 = true

    public var environment: AppleEnvironment { plan.environment }
    /// HTTP requests asked for so far (every `send` and `retry`).
    public var requests: Int { plan.requests }
    /// Retryable failures so far.
    public var failures: Int { plan.failures }
    public var switched: Bool { plan.switched }

    public init(policy: AttemptPolicy, startingEnvironment: AppleEnvironment = .production) {
        self.init(plan: AttemptPlan(policy: policy, startingEnvironment: startingEnvironment))
    }

    /// verifyReceipt's reading of `plan` (not yet started).
    public init(plan: AttemptPlan) {
        self.plan = plan
    }

    /// The default backoff with at most `maxAttempts` retryable failures.
    public init(maxAttempts: Int, startingEnvironment: AppleEnvironment = .production) {
        self.init(policy: AttemptPolicy(maxAttempts: maxAttempts), startingEnvironment: startingEnvironment)
    }

    /// The first step: send to the starting environment.
    public mutating func start() -> Step {
        guard case .send(let environment, _, _) = plan.start() else { preconditionFailure("a plan starts by sending") }
        return .send(environment)
    }

    /// The step after the verdict on the last request (`now`: when its answer arrived, for `Retry-After`).
    public mutating func next(
        after verdict: VerifyVerdict,
        now: Date,
        using rng: inout some RandomNumberGenerator
    ) -> Step {
        switch verdict {
        case .ok(let response):
            return .finished(.ok(response, environment: environment))
        case .switchEnvironment(let target):
            switch plan.next(after: .wrongEnvironment(target), now: now, using: &rng) {
            case .send(let environment, _, _): return .send(environment)
            default:
                return .finished(
                    .rejected(
                        VerdictReason(
                            .environmentLoop,
                            detail: "already switched once; Apple asked for \(target.rawValue) again"
                        )
                    )
                )
            }
        case .retry(let reason, let earliest):
            if reason.code != .receiptMalformedOrTemporary { only21002 = false }
            return retried(reason, step: plan.next(after: .retryable(notBefore: earliest), now: now, using: &rng))
        case .reject(let reason):
            return .finished(.rejected(reason))
        case .configError(let reason):
            return .finished(.configurationError(reason))
        case .unresolved(let reason):
            return .finished(.unresolved(reason))
        }
    }

    /// `next(after:now:using:)` with the system's random numbers.
    public mutating func next(after verdict: VerifyVerdict, now: Date) -> Step {
        var rng = SystemRandomNumberGenerator()
        return next(after: verdict, now: now, using: &rng)
    }

    private func retried(_ reason: VerdictReason, step: AttemptPlan.Step) -> Step {
        switch step {
        case .retry(let environment, _, let wait, let failures):
            return .retry(environment, failures: failures, afterNanoseconds: wait, reason: reason)
        case .finished(.attemptsExhausted(let failures)) where only21002:
            return .finished(
                .rejected(
                    VerdictReason(.invalidReceipt, appleStatus: 21002, detail: "21002 on all \(failures) attempts")
                )
            )
        case .finished(let end) where end != .lastPage && !end.isExhausted:
            let detail = [reason.detail, end.description].compactMap { $0 }.joined(separator: "; ")
            return .finished(
                .unresolved(
                    VerdictReason(
                        reason.code,
                        appleStatus: reason.appleStatus,
                        httpStatus: reason.httpStatus,
                        detail: detail
                    )
                )
            )
        default:
            return .finished(.unresolved(reason))
        }
    }
}
