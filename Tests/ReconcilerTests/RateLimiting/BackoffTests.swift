import Foundation
import Testing

@testable import Reconciler

@Suite struct BackoffTests {
    private let ms: UInt64 = 1_000_000

    private func delays(_ backoff: inout Backoff, seed: UInt64 = 7) -> [Backoff.Decision] {
        var rng = SeededRandomNumberGenerator(seed: seed)
        var out: [Backoff.Decision] = []
        while true {
            let decision = backoff.nextDelay(now: 0, using: &rng)
            out.append(decision)
            if case .giveUp = decision { return out }
        }
    }

    @Test func noJitterDoublesUpToCapAndStopsAtMaxAttempts() throws {
        var backoff = try Backoff(base: .milliseconds(100), cap: .milliseconds(500), maxAttempts: 6, jitter: .none)
        #expect(
            delays(&backoff) == [
                .retry(afterNanoseconds: 100 * ms), .retry(afterNanoseconds: 200 * ms),
                .retry(afterNanoseconds: 400 * ms), .retry(afterNanoseconds: 500 * ms),
                .retry(afterNanoseconds: 500 * ms), .giveUp(.attemptsExhausted(attempts: 6)),
            ]
        )
        #expect(backoff.failedAttempts == 6)
    }

    @Test func maxAttemptsOneNeverRetries() throws {
        var backoff = try Backoff(maxAttempts: 1)
        #expect(backoff.nextDelay(now: 0) == .giveUp(.attemptsExhausted(attempts: 1)))
    }

    @Test func fullJitterStaysWithinExponentialCeilingAndIsSeeded() throws {
        let policy = try Backoff(base: .milliseconds(100), cap: .seconds(2), maxAttempts: 8, jitter: .full)
        var first = policy
        var second = policy
        let a = delays(&first, seed: 99)
        let b = delays(&second, seed: 99)
        #expect(a == b)
        var other = policy
        #expect(delays(&other, seed: 100) != a)
        for (index, decision) in a.dropLast().enumerated() {
            guard case .retry(let nanos) = decision else {
                Issue.record("expected retry at \(index)")
                continue
            }
            let ceiling = min(2_000 * ms, 100 * ms << UInt64(index))
            #expect(nanos <= ceiling)
        }
        #expect(a.count == 8)
    }

    @Test func fullJitterSpreadsDelays() throws {
        let policy = try Backoff(base: .seconds(1), cap: .seconds(1), maxAttempts: 2, jitter: .full)
        var rng = SeededRandomNumberGenerator(seed: 1)
        var seen = Set<UInt64>()
        for _ in 0..<50 {
            var copy = policy
            if case .retry(let nanos) = copy.nextDelay(now: 0, using: &rng) { seen.insert(nanos / (100 * ms)) }
        }
        #expect(seen.count >= 5)
    }

    @Test func decorrelatedJitterStaysBetweenBaseAndCap() throws {
        var backoff = try Backoff(base: .milliseconds(50), cap: .seconds(3), maxAttempts: 40, jitter: .decorrelated)
        let all = delays(&backoff, seed: 3)
        #expect(all.count == 40)
        var previous = 50 * ms
        for decision in all.dropLast() {
            guard case .retry(let nanos) = decision else {
                Issue.record("expected retry")
                continue
            }
            #expect(nanos >= 50 * ms)
            #expect(nanos <= min(3_000 * ms, previous * 3))
            previous = max(nanos, 50 * ms)
        }
    }

    @Test func retryAfterIsHonouredWhenLonger() throws {
        var backoff = try Backoff(base: .milliseconds(100), cap: .seconds(1), maxAttempts: 5, jitter: .none)
        let now: UInt64 = 1_000 * ms
        #expect(backoff.nextDelay(now: now, earliest: now + 7_000 * ms) == .retry(afterNanoseconds: 7_000 * ms))
        // An earliest time already passed (or shorter than backoff) does not shorten the delay.
        #expect(backoff.nextDelay(now: now, earliest: now + 50 * ms) == .retry(afterNanoseconds: 200 * ms))
        #expect(backoff.nextDelay(now: now, earliest: now - 500 * ms) == .retry(afterNanoseconds: 400 * ms))
    }

    @Test func retryAfterBeyondLimitGivesUp() throws {
        var backoff = try Backoff(maxAttempts: 5, maxRetryAfter: .seconds(60))
        let decision = backoff.nextDelay(now: 0, earliest: 61_000 * ms)
        #expect(decision == .giveUp(.retryAfterTooLong(requestedNanoseconds: 61_000 * ms)))
    }

    @Test func resetStartsOver() throws {
        var backoff = try Backoff(base: .milliseconds(10), cap: .seconds(1), maxAttempts: 3, jitter: .none)
        _ = backoff.nextDelay(now: 0)
        _ = backoff.nextDelay(now: 0)
        backoff.reset()
        #expect(backoff.failedAttempts == 0)
        #expect(backoff.nextDelay(now: 0) == .retry(afterNanoseconds: 10 * ms))
    }

    @Test func hugeAttemptCountsDoNotOverflow() throws {
        var backoff = try Backoff(base: .seconds(1), cap: .seconds(3600), maxAttempts: 500, jitter: .none)
        var last: Backoff.Decision = .giveUp(.attemptsExhausted(attempts: 0))
        for _ in 0..<200 { last = backoff.nextDelay(now: 0) }
        #expect(last == .retry(afterNanoseconds: 3_600_000 * ms))
    }

    @Test func rejectsBadConfiguration() {
        #expect(throws: RateLimitConfigurationError.self) { try Backoff(base: .zero) }
        #expect(throws: RateLimitConfigurationError.self) { try Backoff(base: .seconds(2), cap: .seconds(1)) }
        #expect(throws: RateLimitConfigurationError.self) { try Backoff(maxAttempts: 0) }
        #expect(throws: RateLimitConfigurationError.self) { try Backoff(maxRetryAfter: .seconds(-1)) }
    }

}
