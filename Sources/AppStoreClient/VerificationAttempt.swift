import Foundation
import ReceiptDomain

/// The request plan for verifying one receipt: production first, at most one environment switch
/// (21007 -> sandbox, 21008 -> production), bounded retries. A pure state machine: the caller sends
/// what `next(after:)` says, so every HTTP request (switches and retries included) can pass the
/// caller's rate limiter, and the waiting is the caller's business.
public struct VerificationAttempt: Sendable {
    /// What the caller does next.
    public enum Step: Sendable, Equatable {
        /// Send the receipt to this environment now (subject to the rate limiter).
        case send(AppleEnvironment)
        /// Send again to `environment` after a backoff; `failures` retryable failures so far
        /// (1 for the first retry), not before `earliest` when Apple said so.
        case retry(AppleEnvironment, failures: Int, earliest: Date?, reason: VerdictReason)
        /// Done.
        case finished(Final)
    }

    /// How the verification ended.
    public enum Final: Sendable, Equatable {
        /// Apple answered 0/21006 from `environment`: decide from the response.
        case ok(VerifyReceiptResponse, environment: AppleEnvironment)
        /// Permanent for this receipt (21003, 21010, a switch loop, 21002 through the whole budget, ...).
        case rejected(VerdictReason)
        /// Retryable failures used up the budget, or Apple's error said not to retry: nothing is known, change
        /// nothing.
        case unresolved(VerdictReason)
        /// Our configuration is wrong (21004 shared secret, 21000): stop the run.
        case configurationError(VerdictReason)
    }

    /// At most this many retryable failures per receipt (environment switches do not count).
    public let maxAttempts: Int
    public private(set) var environment: AppleEnvironment
    /// HTTP requests asked for so far (every `send` and `retry`).
    public private(set) var requests = 0
    /// Retryable failures so far.
    public private(set) var failures = 0
    public private(set) var switched = false
    /// True while every failure so far was Apple's 21002 (malformed receipt or temporary issue).
    private var only21002 = true

    public init(maxAttempts: Int, startingEnvironment: AppleEnvironment = .production) {
        self.maxAttempts = max(1, maxAttempts)
        self.environment = startingEnvironment
    }

    /// The first step: send to the starting environment (production, as Apple asks).
    public mutating func start() -> Step {
        requests += 1
        return .send(environment)
    }

    /// The step after the verdict on the last request.
    public mutating func next(after verdict: VerifyVerdict) -> Step {
        switch verdict {
        case .ok(let response):
            return .finished(.ok(response, environment: environment))
        case .switchEnvironment(let target):
            guard !switched, target != environment else {
                return .finished(
                    .rejected(
                        VerdictReason(
                            .environmentLoop,
                            detail: "already switched once; Apple asked for \(target.rawValue) again"
                        )
                    )
                )
            }
            switched = true
            environment = target
            requests += 1
            return .send(target)
        case .retry(let reason, let earliest):
            failures += 1
            if reason.code != .receiptMalformedOrTemporary { only21002 = false }
            guard failures < maxAttempts else {
                if only21002 {
                    return .finished(
                        .rejected(
                            VerdictReason(
                                .invalidReceipt,
                                appleStatus: 21002,
                                detail: "21002 on all \(failures) attempts"
                            )
                        )
                    )
                }
                return .finished(.unresolved(reason))
            }
            requests += 1
            return .retry(environment, failures: failures, earliest: earliest, reason: reason)
        case .reject(let reason):
            return .finished(.rejected(reason))
        case .configError(let reason):
            return .finished(.configurationError(reason))
        case .unresolved(let reason):
            return .finished(.unresolved(reason))
        }
    }
}
