import AppStoreClient
import AppStoreSimulator
import Foundation
import ReceiptDomain
import Synchronization
import Testing

/// `verify` stops after `maxAttempts` retryable failures: unresolved in general, invalid_receipt
/// when every failure was 21002.
@Suite struct RetryBudgetTests {
    /// Three attempts, no jitter: the waits are 100 ms, then 200 ms.
    static let steady = AttemptPolicy(maxAttempts: 3, base: .milliseconds(100), cap: .seconds(1), jitter: .none)
    static let now = Date(timeIntervalSince1970: 1_790_000_000)
    static func ms(_ n: UInt64) -> UInt64 { n * 1_000_000 }

    @Test(arguments: [1, 3, 4])
    func retryableFailuresUseUpTheBudgetAndEndUnresolved(maxAttempts: Int) async throws {
        try await withHarness(configure: { c in c.faults = FaultPlan(seed: c.seed, rates: [.http503: 1.0]) }) { h in
            let delays = Mutex<[Int]>([])
            let outcome = await h.client.verify(
                receipt: try h.receipt(.silentRenewal),
                maxAttempts: maxAttempts,
                retryDelay: { failures, _ in
                    delays.withLock { $0.append(failures) }
                    return .milliseconds(5)
                }
            )
            #expect(outcome.final == .unresolved(VerdictReason(.httpServerError, httpStatus: 503)))
            #expect(outcome.attempts.count == maxAttempts)
            #expect(try h.totalRequests() == maxAttempts)
            // One backoff before each retry, numbered from 1.
            #expect(delays.withLock { $0 } == Array(1..<maxAttempts))
        }
    }

    @Test func retryWaitsAtLeastApplesRetryAfter() async throws {
        try await withHarness(configure: { c in
            c.faults = FaultPlan(seed: c.seed, rates: [.http429: 1.0], retryAfterSeconds: 30)
        }) { h in
            let planned = Mutex<[Duration]>([])
            let outcome = await h.client.verify(
                receipt: try h.receipt(.silentRenewal),
                maxAttempts: 2,
                retryDelay: { _, wait in
                    planned.withLock { $0.append(wait) }
                    return .zero  // the test does not wait the 30 s
                }
            )
            guard case .unresolved(let reason) = outcome.final else {
                Issue.record("expected unresolved, got \(outcome.final)")
                return
            }
            #expect(reason.code == .httpRateLimited)
            let seen = planned.withLock { $0 }
            #expect(seen.count == 1)
            // Retry-After: 30 counts from the response; the plan's backoff (1 ms here) is far shorter, so the wait
            // is Apple's (less the moments between the response and the plan's step, longer on a loaded machine).
            let wait = try #require(seen.first)
            #expect(wait > .seconds(15) && wait <= .seconds(30))
        }
    }

    @Test func defaultDelayHonoursRetryAfter() async throws {
        try await withHarness(configure: { c in
            c.faults = FaultPlan(seed: c.seed, rates: [.http429: 1.0], retryAfterSeconds: 1)
        }) { h in
            let started = ContinuousClock.now
            let outcome = await h.client.verify(receipt: try h.receipt(.silentRenewal), maxAttempts: 2)
            #expect(outcome.final == .unresolved(VerdictReason(.httpRateLimited, httpStatus: 429)))
            #expect(outcome.attempts.count == 2)
            // The retry waited for Retry-After (a lower bound, not a performance assertion).
            #expect(ContinuousClock.now - started >= .milliseconds(900))
        }
    }

    @Test func recoveryWithinTheBudgetEndsOk() async throws {
        // Request 0 of seed 21 decides first; find a seed whose first request fails and second does not.
        let rates: [FaultKind: Double] = [.http500: 0.5]
        let seed = try #require(
            (0..<1000 as Range<UInt64>).first { s in
                let plan = FaultPlan(seed: s, rates: rates)
                return plan.decide(sequence: 0) == .http500 && plan.decide(sequence: 1) == nil
            }
        )
        try await withHarness(configure: { c in c.faults = FaultPlan(seed: seed, rates: rates) }) { h in
            let outcome = await h.client.verify(receipt: try h.receipt(.silentRenewal), maxAttempts: 3)
            guard case .ok(_, let environment) = outcome.final else {
                Issue.record("expected ok, got \(outcome.final)")
                return
            }
            #expect(environment == .production)
            #expect(outcome.attempts.map(\.httpStatus) == [500, 200])
        }
    }

    @Test func status21002OnEveryAttemptIsAnInvalidReceipt() async throws {
        // A stored receipt Apple cannot read: 21002 whatever happens.
        try await withHarness { h in
            let outcome = await h.client.verify(receipt: try h.receipt(.malformedReceipt), maxAttempts: 3)
            guard case .rejected(let reason) = outcome.final else {
                Issue.record("expected rejected(invalid_receipt), got \(outcome.final)")
                return
            }
            #expect(reason.code == .invalidReceipt)
            #expect(reason.appleStatus == 21002)
            #expect(outcome.attempts.count == 3)
            #expect(try h.pathStats("/verifyReceipt").apple == ["21002": 3])
        }
        // The same through the fault switch (Apple's "temporary issue" flavour of 21002).
        try await withHarness(configure: { c in c.faults = FaultPlan(seed: c.seed, rates: [.status21002: 1.0]) }) { h in
            let outcome = await h.client.verify(receipt: try h.receipt(.silentRenewal), maxAttempts: 2)
            #expect(outcome.final.isRejected(.invalidReceipt))
            #expect(outcome.attempts.count == 2)
        }
    }

    @Test func mixed21002AndOtherFailuresEndUnresolvedNotInvalid() {
        var plan = VerificationAttempt(policy: Self.steady)
        #expect(plan.start() == .send(.production))
        let r21002 = VerdictReason(.receiptMalformedOrTemporary, appleStatus: 21002)
        let r500 = VerdictReason(.httpServerError, httpStatus: 500)
        #expect(
            plan.next(after: .retry(r21002, earliest: nil), now: Self.now)
                == .retry(.production, failures: 1, afterNanoseconds: Self.ms(100), reason: r21002)
        )
        #expect(
            plan.next(after: .retry(r500, earliest: nil), now: Self.now)
                == .retry(.production, failures: 2, afterNanoseconds: Self.ms(200), reason: r500)
        )
        #expect(plan.next(after: .retry(r21002, earliest: nil), now: Self.now) == .finished(.unresolved(r21002)))
        #expect(plan.requests == 3)
        #expect(plan.failures == 3)
    }

    @Test func environmentSwitchDoesNotSpendTheRetryBudget() {
        var plan = VerificationAttempt(policy: Self.steady)
        _ = plan.start()
        let r = VerdictReason(.serverUnavailable, appleStatus: 21005)
        #expect(
            plan.next(after: .retry(r, earliest: nil), now: Self.now)
                == .retry(.production, failures: 1, afterNanoseconds: Self.ms(100), reason: r)
        )
        #expect(plan.next(after: .switchEnvironment(to: .sandbox), now: Self.now) == .send(.sandbox))
        // The retry after the switch goes to the new environment.
        #expect(
            plan.next(after: .retry(r, earliest: nil), now: Self.now)
                == .retry(.sandbox, failures: 2, afterNanoseconds: Self.ms(200), reason: r)
        )
        #expect(plan.next(after: .retry(r, earliest: nil), now: Self.now) == .finished(.unresolved(r)))
        #expect(plan.requests == 4)
        #expect(plan.environment == .sandbox)
    }
}

extension VerificationAttempt.Final {
    fileprivate func isRejected(_ code: VerdictReason.Code) -> Bool {
        if case .rejected(let reason) = self { return reason.code == code }
        return false
    }
}
