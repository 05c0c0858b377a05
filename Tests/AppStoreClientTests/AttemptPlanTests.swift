import AppStoreClient
import Foundation
import ReceiptDomain
import Testing

/// The one attempt plan, rule by rule (docs/decision-rules.md, "Retries and backoff"): counting, backoff and
/// its jitter, `Retry-After`, the environment switch, pages.
@Suite struct AttemptPlanTests {
    private static let ms: UInt64 = 1_000_000
    private static let now = Date(timeIntervalSince1970: 1_790_000_000)
    /// No jitter: the waits are the exponential ceilings.
    private static let steady = AttemptPolicy(
        maxAttempts: 6,
        base: .milliseconds(100),
        cap: .milliseconds(500),
        jitter: .none
    )

    /// Retryable failures one after the other until the plan ends; the waits it asked for, and its end.
    private static func failures(
        _ plan: inout AttemptPlan,
        seed: UInt64 = 7,
        notBefore: Date? = nil
    ) -> (waits: [UInt64], end: AttemptPlan.End?) {
        var rng = SeededRandomNumberGenerator(seed: seed)
        var waits: [UInt64] = []
        while true {
            switch plan.next(after: .retryable(notBefore: notBefore), now: now, using: &rng) {
            case .retry(_, _, let wait, let failures):
                #expect(failures == waits.count + 1)
                waits.append(wait)
            case .finished(let end): return (waits, end)
            case .send: return (waits, nil)
            }
        }
    }

    @Test func backoffDoublesUpToTheCapAndTheBudgetEndsTheRead() {
        var plan = AttemptPlan(policy: Self.steady)
        #expect(plan.start() == .send(.production, page: nil, switching: false))
        let (waits, end) = Self.failures(&plan)
        #expect(waits == [100, 200, 400, 500, 500].map { $0 * Self.ms })
        #expect(end == .attemptsExhausted(failures: 6))
        #expect(plan.requests == 6)
    }

    @Test func oneAttemptNeverRetries() {
        var plan = AttemptPlan(policy: AttemptPolicy(maxAttempts: 1))
        _ = plan.start()
        #expect(
            plan.next(after: .retryable(notBefore: nil), now: Self.now) == .finished(.attemptsExhausted(failures: 1))
        )
    }

    @Test func fullJitterStaysUnderTheCeilingIsSeededAndSpreads() {
        let policy = AttemptPolicy(maxAttempts: 8, base: .milliseconds(100), cap: .seconds(2), jitter: .full)
        var first = AttemptPlan(policy: policy)
        var second = AttemptPlan(policy: policy)
        var other = AttemptPlan(policy: policy)
        let a = Self.failures(&first, seed: 99).waits
        #expect(a == Self.failures(&second, seed: 99).waits)
        #expect(a != Self.failures(&other, seed: 100).waits)
        #expect(a.count == 7)
        for (index, wait) in a.enumerated() {
            #expect(wait <= min(2_000 * Self.ms, 100 * Self.ms << UInt64(index)))
        }
        // Many plans' first retries are spread over the whole range [0, base], not bunched together.
        var rng = SeededRandomNumberGenerator(seed: 1)
        var buckets = Set<UInt64>()
        for _ in 0..<50 {
            var plan = AttemptPlan(policy: AttemptPolicy(base: .seconds(1), cap: .seconds(1)))
            if case .retry(_, _, let wait, _) = plan.next(after: .retryable(notBefore: nil), now: Self.now, using: &rng)
            {
                #expect(wait <= 1_000 * Self.ms)
                buckets.insert(wait / (100 * Self.ms))
            }
        }
        #expect(buckets.count >= 5)
    }

    @Test func retryAfterIsHonouredWhenLongerThanTheBackoff() {
        var plan = AttemptPlan(policy: Self.steady)
        var rng = SeededRandomNumberGenerator(seed: 1)
        let retry = { (notBefore: Date) in
            plan.next(after: .retryable(notBefore: notBefore), now: Self.now, using: &rng)
        }
        #expect(
            retry(Self.now.addingTimeInterval(7))
                == .retry(.production, page: nil, afterNanoseconds: 7_000 * Self.ms, failures: 1)
        )
        // Shorter than the backoff, or already past: the backoff.
        #expect(
            retry(Self.now.addingTimeInterval(0.05))
                == .retry(.production, page: nil, afterNanoseconds: 200 * Self.ms, failures: 2)
        )
        #expect(
            retry(Self.now.addingTimeInterval(-5))
                == .retry(.production, page: nil, afterNanoseconds: 400 * Self.ms, failures: 3)
        )
    }

    @Test func retryAfterBeyondTheLimitGivesUp() {
        var plan = AttemptPlan(policy: AttemptPolicy(maxRetryAfter: .seconds(60)))
        _ = plan.start()
        #expect(
            plan.next(after: .retryable(notBefore: Self.now.addingTimeInterval(61)), now: Self.now)
                == .finished(.retryAfterTooLong(requestedNanoseconds: 61_000 * Self.ms))
        )
        #expect(plan.requests == 1)
    }

    @Test func hugeFailureCountsDoNotOverflow() {
        var plan = AttemptPlan(
            policy: AttemptPolicy(maxAttempts: 500, base: .seconds(1), cap: .seconds(3600), jitter: .none)
        )
        let waits = Self.failures(&plan).waits
        #expect(waits.count == 499)
        #expect(waits.last == 3_600_000 * Self.ms)
    }

    @Test func environmentSwitchesOnceAndDoesNotSpendTheBudget() {
        var plan = AttemptPlan(policy: AttemptPolicy(maxAttempts: 2, jitter: .none))
        #expect(plan.start() == .send(.production, page: nil, switching: false))
        #expect(
            plan.next(after: .wrongEnvironment(.sandbox), now: Self.now) == .send(.sandbox, page: nil, switching: true)
        )
        #expect(plan.switched)
        // The retry goes to the new environment; the switch did not count as a failure.
        #expect(
            plan.next(after: .retryable(notBefore: nil), now: Self.now)
                == .retry(.sandbox, page: nil, afterNanoseconds: 500 * Self.ms, failures: 1)
        )
        // A second switch, back or to where it is, is refused: never a loop.
        #expect(
            plan.next(after: .wrongEnvironment(.production), now: Self.now) == .finished(.switchRefused(.production))
        )
        var stay = AttemptPlan(policy: AttemptPolicy(), startingEnvironment: .sandbox)
        _ = stay.start()
        #expect(stay.next(after: .wrongEnvironment(.sandbox), now: Self.now) == .finished(.switchRefused(.sandbox)))
        #expect(plan.requests == 3)
    }

    @Test func pagesFollowTheTokenAndEachPageHasTheWholeBudget() {
        var plan = AttemptPlan(
            policy: AttemptPolicy(maxAttempts: 2, jitter: .none),
            startingEnvironment: .sandbox,
            page: "stored"
        )
        // A stored token is where a resumed read starts.
        #expect(plan.start() == .send(.sandbox, page: "stored", switching: false))
        #expect(
            plan.next(after: .usable(nextPage: "p2"), now: Self.now) == .send(.sandbox, page: "p2", switching: false)
        )
        // A failure retries the same page.
        #expect(
            plan.next(after: .retryable(notBefore: nil), now: Self.now)
                == .retry(.sandbox, page: "p2", afterNanoseconds: 500 * Self.ms, failures: 1)
        )
        // A usable page starts the count again: the next page may fail once more without ending the read.
        #expect(
            plan.next(after: .usable(nextPage: "p3"), now: Self.now) == .send(.sandbox, page: "p3", switching: false)
        )
        #expect(plan.failures == 0)
        #expect(
            plan.next(after: .retryable(notBefore: nil), now: Self.now)
                == .retry(.sandbox, page: "p3", afterNanoseconds: 500 * Self.ms, failures: 1)
        )
        // No next page: the read is done, and another read starts from the first page.
        #expect(plan.next(after: .usable(nextPage: nil), now: Self.now) == .finished(.lastPage))
        #expect(plan.page == nil)
        #expect(plan.start() == .send(.sandbox, page: nil, switching: false))
        #expect(plan.requests == 6)
    }

    @Test func outOfRangePoliciesAreBroughtIntoRange() {
        let policy = AttemptPolicy(maxAttempts: 0, base: .zero, cap: .seconds(-1), maxRetryAfter: .seconds(-1))
        #expect(policy.maxAttempts == 1)
        #expect(policy.base > .zero)
        #expect(policy.cap >= policy.base)
        #expect(policy.maxRetryAfter == .zero)
    }

    @Test func verifyReceiptReadsTheEndsOfThePlan() {
        var plan = VerificationAttempt(policy: AttemptPolicy(maxAttempts: 3, maxRetryAfter: .seconds(10)))
        _ = plan.start()
        let r = VerdictReason(.httpRateLimited, httpStatus: 429)
        guard
            case .finished(.unresolved(let reason)) = plan.next(
                after: .retry(r, earliest: Self.now.addingTimeInterval(60)),
                now: Self.now
            )
        else {
            Issue.record("a Retry-After beyond the limit ends the receipt unresolved")
            return
        }
        #expect(reason.code == .httpRateLimited)
        #expect(reason.detail?.contains("wait 60 s") == true)
        var loop = VerificationAttempt(maxAttempts: 3)
        _ = loop.start()
        #expect(loop.next(after: .switchEnvironment(to: .sandbox), now: Self.now) == .send(.sandbox))
        guard
            case .finished(.rejected(let refused)) = loop.next(
                after: .switchEnvironment(to: .production),
                now: Self.now
            )
        else {
            Issue.record("a second switch is an environment loop")
            return
        }
        #expect(refused.code == .environmentLoop)
    }
}
