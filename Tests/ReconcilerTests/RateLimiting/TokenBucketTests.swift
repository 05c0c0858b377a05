import AppStoreClient
import Dispatch
import Synchronization
import Testing

@testable import Reconciler

@Suite struct TokenBucketTests {
    private let second: UInt64 = 1_000_000_000

    /// Grants `count` reservations as fast as possible (each caller reserves at the same
    /// `now`, reservations are spread by the returned delay) and returns the grant ticks.
    private func grants(_ bucket: inout TokenBucket, count: Int, at now: UInt64) -> [UInt64] {
        (0..<count).map { _ in now + bucket.reserve(now: now) }
    }

    /// The largest number of grants inside any half-open window `[t, t + length)`.
    private func maxInWindow(_ ticks: [UInt64], length: UInt64) -> Int {
        let sorted = ticks.sorted()
        var best = 0
        var lo = 0
        for hi in sorted.indices {
            while sorted[hi] - sorted[lo] >= length { lo += 1 }
            best = max(best, hi - lo + 1)
        }
        return best
    }

    @Test func firstReservationIsImmediate() throws {
        var bucket = try TokenBucket(rate: 10)
        #expect(bucket.reserve(now: 5 * second) == 0)
    }

    @Test func simultaneousCallersGetStaggeredSlots() throws {
        var bucket = try TokenBucket(rate: 4)
        let delays = (0..<5).map { _ in bucket.reserve(now: 100) }
        #expect(delays == [0, 250_000_000, 500_000_000, 750_000_000, 1_000_000_000])
    }

    @Test func burstAllowsThatManyAtOnceThenPaces() throws {
        var bucket = try TokenBucket(rate: 2, burst: 3)
        let delays = (0..<5).map { _ in bucket.reserve(now: 10 * second) }
        #expect(delays == [0, 0, 0, 500_000_000, 1_000_000_000])
    }

    @Test func idleBucketRefillsOnlyUpToBurst() throws {
        var bucket = try TokenBucket(rate: 1, burst: 2)
        _ = grants(&bucket, count: 2, at: 0)
        // An hour of idleness refills two tokens, not 3600.
        let later = 3600 * second
        let delays = (0..<4).map { _ in bucket.reserve(now: later) }
        #expect(delays == [0, 0, second, 2 * second])
    }

    @Test func anyOneSecondWindowHoldsAtMostRateWithBurstOne() throws {
        for rate in [1.0, 3.0, 7.0, 10.0, 33.0, 50.0] {
            var bucket = try TokenBucket(rate: rate)
            var ticks: [UInt64] = []
            var now: UInt64 = 1_000
            // Callers arrive at irregular times, some in clumps, each sending at its granted slot.
            for index in 0..<500 {
                now += UInt64((index * 7919) % 97) * 1_000_000
                ticks.append(now + bucket.reserve(now: now))
            }
            #expect(maxInWindow(ticks, length: second) <= Int(rate), "rate \(rate)")
            // And the limiter is not needlessly slow: clumped callers do reach the rate.
            var clumped = try TokenBucket(rate: rate)
            let burstTicks = grants(&clumped, count: 3 * Int(rate), at: 0)
            #expect(maxInWindow(burstTicks, length: second) == Int(rate), "rate \(rate)")
        }
    }

    @Test func anyWindowHoldsAtMostBurstPlusRateTimesLength() throws {
        let rate = 5.0
        let burst = 4
        var bucket = try TokenBucket(rate: rate, burst: burst)
        var ticks: [UInt64] = []
        var now: UInt64 = 0
        var rng = SeededRandomNumberGenerator(seed: 42)
        for _ in 0..<2_000 {
            now += UInt64.random(in: 0...600_000_000, using: &rng)
            ticks.append(now + bucket.reserve(now: now))
        }
        for window in [UInt64(1), 100_000_000, 999_999_999, second, 3 * second, 10 * second] {
            let bound = Double(burst) + rate * Double(window) / Double(second)
            // Closed windows [t, t + window] contain at most burst + rate * window grants.
            let count = maxInWindow(ticks, length: window + 1)
            #expect(Double(count) <= bound, "window \(window) ns: \(count) > \(bound)")
        }
    }

    @Test func setRateAppliesToLaterSlotsOnly() throws {
        var bucket = try TokenBucket(rate: 10)
        #expect(bucket.reserve(now: 0) == 0)
        #expect(bucket.reserve(now: 0) == 100_000_000)
        bucket.setRate(1)
        // The slot at 200 ms was promised at rate 10; the one after follows rate 1.
        #expect(bucket.reserve(now: 0) == 200_000_000)
        #expect(bucket.reserve(now: 0) == 1_200_000_000)
        #expect(bucket.rate == 1)
        bucket.setRate(-3)
        #expect(bucket.rate == TokenBucket.minimumRate)
    }

    @Test func fractionalRatesRoundIntervalUp() throws {
        var bucket = try TokenBucket(rate: 3)
        #expect(bucket.intervalNanoseconds == 333_333_334)
        _ = bucket.reserve(now: 0)
        #expect(bucket.peekDelay(now: 0) == 333_333_334)
        var slow = try TokenBucket(rate: 0.5)
        _ = slow.reserve(now: 0)
        #expect(slow.reserve(now: second) == second)
    }

    @Test func clockGoingBackwardsNeverGrantsEarlier() throws {
        var bucket = try TokenBucket(rate: 2)
        #expect(bucket.reserve(now: 10 * second) == 0)
        let delay = bucket.reserve(now: 9 * second)
        #expect(9 * second + delay == 10 * second + 500_000_000)
    }

    @Test func rejectsBadConfiguration() {
        #expect(throws: RateLimitConfigurationError.self) { try TokenBucket(rate: 0) }
        #expect(throws: RateLimitConfigurationError.self) { try TokenBucket(rate: .nan) }
        #expect(throws: RateLimitConfigurationError.self) { try TokenBucket(rate: .infinity) }
        #expect(throws: RateLimitConfigurationError.self) { try TokenBucket(rate: 5, burst: 0) }
        do {
            _ = try TokenBucket(rate: 5, burst: -2)
            Issue.record("expected an error")
        } catch {
            #expect(String(describing: error) == "burst: must be >= 1, got -2")
        }
    }

    @Test func monotonicClockAdvances() {
        let a = MonotonicClock.now()
        let b = MonotonicClock.now()
        #expect(b >= a)
        #expect(a > 0)
    }

}
