import Foundation
import Testing

@testable import Reconciler

/// The outage breaker alone, on ticks the test chooses (docs/architecture.md, "Apple outages").
@Suite struct OutageBreakerTests {
    static let second: UInt64 = 1_000_000_000
    static let start: UInt64 = 1_000 * second

    /// The breaker under test (a class, so `#expect` can call its mutating methods).
    final class Subject {
        var breaker: OutageBreaker
        init(_ breaker: OutageBreaker) { self.breaker = breaker }

        func fail(at tick: UInt64, times: Int = 1) -> Bool {
            var tripped = false
            for _ in 0..<times {
                tripped =
                    breaker.recordUnreachable(host: "buy.itunes.apple.com", reason: "HTTP 503", now: tick) || tripped
            }
            return tripped
        }
    }

    @Test func tripsOnTheNthConsecutiveFailureOnceTheWindowHasPassed() {
        let subject = Subject(OutageBreaker(failures: 50, windowSeconds: 120, start: Self.start))
        let late = Self.start + 121 * Self.second
        #expect(!subject.fail(at: late, times: 49))
        #expect(!subject.breaker.isTripped)
        let tripped = subject.breaker.recordUnreachable(host: "buy.itunes.apple.com", reason: "timeout (28)", now: late)
        #expect(tripped)
        #expect(subject.breaker.isTripped)
        #expect(subject.breaker.consecutiveFailures == 50)
        let message = subject.breaker.message(now: late)
        #expect(message.hasPrefix("Apple unreachable: buy.itunes.apple.com, last failure: timeout (28)"))
        // Tripped once: later failures do not report it again.
        #expect(!subject.fail(at: late))
    }

    @Test func tripsWhenTheWindowPassesWithoutAGoodAnswer() {
        let subject = Subject(OutageBreaker(failures: 50, windowSeconds: 120, start: Self.start))
        // 500 failures in the first 10 s: many, but not for long enough.
        for i in 0..<500 {
            #expect(!subject.fail(at: Self.start + UInt64(i) * Self.second / 50))
        }
        #expect(!subject.fail(at: Self.start + 119 * Self.second))
        #expect(subject.fail(at: Self.start + 120 * Self.second))
    }

    @Test func anyGoodAnswerResetsBothCounts() {
        let subject = Subject(OutageBreaker(failures: 10, windowSeconds: 60, start: Self.start))
        #expect(!subject.fail(at: Self.start + 30 * Self.second, times: 9))
        subject.breaker.recordAnswer(now: Self.start + 59 * Self.second)
        #expect(subject.breaker.consecutiveFailures == 0)
        // The window counts from the good answer now, and the failures start again from zero.
        #expect(!subject.fail(at: Self.start + 100 * Self.second, times: 20))
        #expect(!subject.fail(at: Self.start + 118 * Self.second))
        #expect(subject.fail(at: Self.start + 119 * Self.second))
    }

    @Test func aShortBurstDoesNotTrip() {
        let subject = Subject(OutageBreaker(failures: 50, windowSeconds: 120, start: Self.start))
        var tick = Self.start
        // Every few minutes, 5 s of refused connections at 50 requests a second, then Apple answers again.
        for _ in 0..<20 {
            tick += 170 * Self.second
            subject.breaker.recordAnswer(now: tick)
            for _ in 0..<250 {
                tick += Self.second / 50
                #expect(!subject.fail(at: tick))
            }
        }
        #expect(!subject.breaker.isTripped)
    }

    @Test func fewFailuresOverALongWindowDoNotTrip() {
        // A slow run: a timeout every 30 s for 10 minutes is not 50 in a row yet.
        let subject = Subject(OutageBreaker(failures: 50, windowSeconds: 120, start: Self.start))
        for i in 1...20 { #expect(!subject.fail(at: Self.start + UInt64(i) * 30 * Self.second)) }
    }

    @Test func zeroFailuresTurnsItOff() {
        let subject = Subject(OutageBreaker(failures: 0, windowSeconds: 1, start: Self.start))
        #expect(!subject.fail(at: Self.start + 3_600 * Self.second, times: 10_000))
    }

    @Test func whichAnswersSayUnreachable() {
        let request = SourceRequest(budget: RateBudget(name: "apple", rate: 1), environment: .production)
        func answer(http: Int?, apple: Int? = nil, transport: String? = nil) -> SourceAnswer {
            SourceAnswer(
                request: request,
                httpStatus: http,
                appleStatus: apple,
                transportFailure: transport,
                throttled: http == 429 || http == 503
            )
        }
        #expect(OutageBreaker.unreachableReason(answer(http: nil, transport: "reset")) == "reset")
        #expect(OutageBreaker.unreachableReason(answer(http: 502)) == "HTTP 502")
        #expect(OutageBreaker.unreachableReason(answer(http: 503)) == "HTTP 503")
        #expect(OutageBreaker.unreachableReason(answer(http: 200, apple: 21005)) == "Apple status 21005")
        #expect(OutageBreaker.unreachableReason(answer(http: 200, apple: 21150)) == "Apple status 21150")
        for good in [
            answer(http: 200, apple: 0), answer(http: 429), answer(http: 401), answer(http: 200, apple: 21004),
        ] {
            #expect(OutageBreaker.unreachableReason(good) == nil)
        }
    }
}
