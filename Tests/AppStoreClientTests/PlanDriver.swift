import AppStoreClient
import Dispatch
import Foundation
import ReceiptDomain

/// A minimal driver for one receipt's `VerificationAttempt` plan, for these tests only: the nightly
/// pipeline is the one production driver (rate limit, backoff, concurrency); here each request is
/// exercised against the simulator without them.
extension VerifyReceiptClient {
    /// The whole plan for one receipt, with a simple delay between retries (no shared rate limiter):
    /// production first, at most one environment switch, at most `maxAttempts` retryable failures.
    /// - Parameter retryDelay: the wait before retry number `failures` (1-based), given the plan's wait (a 1 ms
    ///   backoff here, never shorter than Apple's `Retry-After`; default: `planned`, the plan's wait up to a minute).
    func verify(
        receipt: String,
        maxAttempts: Int = 3,
        retryDelay: @escaping @Sendable (_ failures: Int, _ planned: Duration) -> Duration = planned,
        completion: @escaping @Sendable (VerifyOutcome) -> Void
    ) {
        var plan = VerificationAttempt(policy: Self.quickPolicy(maxAttempts: maxAttempts))
        let first = plan.start()
        drive(receipt: receipt, plan: plan, step: first, history: [], retryDelay: retryDelay, completion: completion)
    }

    /// Async form of `verify`.
    func verify(
        receipt: String,
        maxAttempts: Int = 3,
        retryDelay: @escaping @Sendable (_ failures: Int, _ planned: Duration) -> Duration = planned
    ) async -> VerifyOutcome {
        await withCheckedContinuation { continuation in
            verify(receipt: receipt, maxAttempts: maxAttempts, retryDelay: retryDelay) {
                continuation.resume(returning: $0)
            }
        }
    }

    /// The plan's policy in these tests: a 1 ms backoff, so only Apple's `Retry-After` makes a retry wait.
    static func quickPolicy(maxAttempts: Int) -> AttemptPolicy {
        AttemptPolicy(maxAttempts: maxAttempts, base: .milliseconds(1), cap: .milliseconds(1))
    }

    /// The default retry delay: the plan's, up to a minute (a longer wait is the caller's decision, through its
    /// own `retryDelay`).
    static func planned(_ failures: Int, _ planned: Duration) -> Duration {
        min(planned, .seconds(60))
    }

    private func drive(
        receipt: String,
        plan: VerificationAttempt,
        step: VerificationAttempt.Step,
        history: [VerifyAttemptResult],
        retryDelay: @escaping @Sendable (Int, Duration) -> Duration,
        completion: @escaping @Sendable (VerifyOutcome) -> Void
    ) {
        switch step {
        case .finished(let final):
            completion(VerifyOutcome(final: final, attempts: history))
        case .send(let environment):
            send(receipt: receipt, to: environment) { result in
                var plan = plan
                let next = plan.next(after: result.verdict, now: Date())
                self.drive(
                    receipt: receipt,
                    plan: plan,
                    step: next,
                    history: history + [result],
                    retryDelay: retryDelay,
                    completion: completion
                )
            }
        case .retry(let environment, let failures, let wait, _):
            let delay = retryDelay(failures, .nanoseconds(Int64(min(wait, UInt64(Int64.max)))))
            let nanos = max(0, delay.components.seconds * 1_000_000_000 + delay.components.attoseconds / 1_000_000_000)
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(nanos))) {
                self.drive(
                    receipt: receipt,
                    plan: plan,
                    step: .send(environment),
                    history: history,
                    retryDelay: retryDelay,
                    completion: completion
                )
            }
        }
    }
}

/// How a stand-alone `verify` ended, with every request it made.
struct VerifyOutcome: Sendable {
    let final: VerificationAttempt.Final
    let attempts: [VerifyAttemptResult]
}
