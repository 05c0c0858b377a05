import Foundation
import Logging
import Testing

@testable import Reconciler

/// The pipeline in-process: an in-memory store, a scripted Apple source and a virtual clock (no child
/// process, no socket, no database). Minutes of virtual time run in milliseconds.
@Suite struct ReconciliationPipelineTests {
    static let second: UInt64 = 1_000_000_000
    static let quiet = Logger(label: "pipeline-test", factory: { _ in SwiftLogNoOpLogHandler() })

    static func options(rate: Double, concurrency: Int = 16, batchSize: Int = 50, maxAttempts: Int = 5) -> RunOptions {
        var options = RunOptions()
        options.rate = rate
        options.concurrency = concurrency
        options.batchSize = batchSize
        options.maxAttempts = maxAttempts
        options.backoffBaseSeconds = 0.2
        options.backoffCapSeconds = 2
        return options
    }

    static func pipeline(
        _ store: InMemoryPipelineStore,
        _ source: FakeSource,
        _ options: RunOptions
    ) throws -> ReconciliationPipeline {
        try ReconciliationPipeline(
            store: store,
            source: source,
            options: options,
            logger: quiet,
            clock: source.clock
        )
    }

    /// The most sends of `budget` in any half-open one-second window.
    static func busiestSecond(_ sends: [FakeSource.Send], budget: RateBudget? = nil) -> Int {
        let ticks = sends.filter { budget == nil || $0.budget == budget }.map(\.tick).sorted()
        var best = 0
        var start = 0
        for end in ticks.indices {
            while ticks[end] - ticks[start] >= second { start += 1 }
            best = max(best, end - start + 1)
        }
        return best
    }

    @Test func everyItemEndsExactlyOnce() throws {
        let clock = VirtualClock()
        let budget = RateBudget(name: "apple", rate: 100)
        let source = FakeSource(clock: clock, budgets: [budget]) { id, attempt, _, _ in
            // Every seventh item fails twice before Apple answers.
            id % 7 == 0 && attempt <= 2 ? .retry(throttled: false, retryAfter: nil, pause: false) : .ok
        }
        let store = InMemoryPipelineStore(count: 500)
        let result = clock.drive(try Self.pipeline(store, source, Self.options(rate: 100)))
        #expect(result.stopReason == nil)
        #expect(result.written == 500)
        #expect(store.written.count == 500)
        #expect(store.written.values.allSatisfy { $0.count == 1 }, "an item was written twice")
        #expect(result.outcomes[.unchanged] == 500)
        #expect(result.stats.retries == 2 * (500 / 7))
        #expect(result.stats.requests == 500 + 2 * (500 / 7))
        let retried = try #require(store.written[7]?.first)
        #expect(retried.attempts == 3)
    }

    @Test func neverMoreThanTheRateInAnyOneSecondWindow() throws {
        let clock = VirtualClock()
        let budget = RateBudget(name: "apple", rate: 50.9)
        let source = FakeSource(clock: clock, budgets: [budget], latency: 5_000_000)
        let store = InMemoryPipelineStore(count: 600)
        let result = clock.drive(try Self.pipeline(store, source, Self.options(rate: 50.9, concurrency: 64)))
        #expect(result.written == 600)
        #expect(Self.busiestSecond(source.sends) == 50)
        // And the rate is actually used: 600 requests at 50/s take about 12 virtual seconds.
        let sends = source.sends.map(\.tick)
        let span = Double((sends.max() ?? 0) - (sends.min() ?? 0)) / 1e9
        #expect(span < 13.5, "600 requests took \(span) s")
    }

    @Test func neverMoreThanTheConcurrencyInFlight() throws {
        let clock = VirtualClock()
        let budget = RateBudget(name: "apple", rate: 1000)
        let source = FakeSource(clock: clock, budgets: [budget], latency: 300_000_000)
        let store = InMemoryPipelineStore(count: 300)
        let result = clock.drive(try Self.pipeline(store, source, Self.options(rate: 1000, concurrency: 8)))
        #expect(result.written == 300)
        #expect(source.peakOutstanding == 8)
    }

    /// Memory does not grow with the run: no more than `maxActive` items are read and unwritten at any
    /// moment (a page is read only when it fits), and a started item is not kept by the queue it came from:
    /// once written, nothing of it is left.
    @Test func itemsInMemoryStayBounded() throws {
        let clock = VirtualClock()
        let budget = RateBudget(name: "apple", rate: 1000)
        let source = FakeSource(clock: clock, budgets: [budget], latency: 300_000_000) { id, attempt, _, _ in
            id % 5 == 0 && attempt <= 2 ? .retry(throttled: false, retryAfter: nil, pause: false) : .ok
        }
        let store = InMemoryPipelineStore(count: 3000)
        let pipeline = try Self.pipeline(store, source, Self.options(rate: 1000, concurrency: 16, batchSize: 50))
        let bound = pipeline.maxActive
        #expect(bound == 16 * 3 + 50 + 100)
        let result = clock.drive(pipeline)
        #expect(result.written == 3000)
        #expect(store.written.values.allSatisfy { $0.count == 1 }, "an item was written twice")
        #expect(store.peakUnwritten <= bound, "read ahead of the pipeline: \(store.peakUnwritten) items unwritten")
        #expect(source.peakLiveVerifications <= bound, "\(source.peakLiveVerifications) items alive at once")
        withExtendedLifetime(pipeline) {
            #expect(source.liveVerifications == 0, "finished items still held by the pipeline")
        }
    }

    @Test func aStopMidRunLeavesUnfinishedItemsPending() throws {
        let clock = VirtualClock()
        let budget = RateBudget(name: "apple", rate: 50)
        let source = FakeSource(clock: clock, budgets: [budget])
        let store = InMemoryPipelineStore(count: 1000)
        let pipeline = try Self.pipeline(store, source, Self.options(rate: 50))
        var stopAt: UInt64?
        let result = clock.drive(pipeline) { tick in
            if stopAt == nil, tick >= 5 * Self.second {
                stopAt = clock.now()
                pipeline.requestStop(.interrupted("SIGTERM"))
            }
        }
        #expect(result.stopReason == .interrupted("SIGTERM"))
        let written = store.written
        #expect(written.count == result.written)
        #expect(written.count > 100 && written.count < 1000, "\(written.count) written")
        #expect(written.values.allSatisfy { $0.count == 1 })
        // What was not written is exactly what a resume will find pending.
        let pending = try store.fetchPending(after: 0, limit: 10_000)
        #expect(pending.count == 1000 - written.count)
        // Requests already sent were answered and written; nothing new left after the stop.
        let stopTick = try #require(stopAt)
        #expect(source.sends.allSatisfy { $0.tick <= stopTick })
        #expect(Set(source.sends.map(\.subscriptionId)) == Set(written.keys))
    }

    @Test func retryAfterIsHonoured() throws {
        let clock = VirtualClock()
        let budget = RateBudget(name: "apple", rate: 100)
        let source = FakeSource(clock: clock, budgets: [budget]) { id, attempt, _, _ in
            id == 3 && attempt == 1 ? .retry(throttled: true, retryAfter: 7, pause: false) : .ok
        }
        let store = InMemoryPipelineStore(count: 40)
        let result = clock.drive(try Self.pipeline(store, source, Self.options(rate: 100)))
        #expect(result.written == 40)
        let third = source.sends.filter { $0.subscriptionId == 3 }.map(\.tick)
        #expect(third.count == 2)
        #expect(third[1] - third[0] >= 7 * Self.second, "resent after \(Double(third[1] - third[0]) / 1e9) s")
        // Only this item waited: the others went on meanwhile.
        #expect(source.sends.filter { $0.tick > third[0] && $0.tick < third[1] }.count == 37)
    }

    @Test func retryAfterPausesOneBudgetOnly() throws {
        let clock = VirtualClock()
        let paused = RateBudget(name: "statuses", rate: 20)
        let other = RateBudget(name: "history", rate: 20)
        let source = FakeSource(clock: clock, budgets: [paused, other]) { id, attempt, budget, _ in
            budget == paused && id == 2 && attempt == 1 ? .retry(throttled: true, retryAfter: 5, pause: true) : .ok
        }
        let store = InMemoryPipelineStore(count: 200)
        let result = clock.drive(try Self.pipeline(store, source, Self.options(rate: 20)))
        #expect(result.written == 200)
        let pauseStart = try #require(source.sends.first { $0.subscriptionId == 2 }).tick + 50_000_000
        let window = source.sends.filter {
            $0.tick > pauseStart + Self.second / 10 && $0.tick < pauseStart + 5 * Self.second
        }
        #expect(window.allSatisfy { $0.budget == other }, "a paused budget sent during its Retry-After")
        #expect(window.count >= 4 * 20 - 2, "the other budget kept its rate: \(window.count) sends")
    }

    @Test func eachBudgetKeepsItsOwnRate() throws {
        let clock = VirtualClock()
        let slow = RateBudget(name: "slow", rate: 10)
        let fast = RateBudget(name: "fast", rate: 30)
        let source = FakeSource(clock: clock, budgets: [slow, fast], latency: 5_000_000)
        let store = InMemoryPipelineStore(count: 200)
        let result = clock.drive(try Self.pipeline(store, source, Self.options(rate: 30, concurrency: 32)))
        #expect(result.written == 200)
        #expect(Self.busiestSecond(source.sends, budget: slow) <= 10)
        #expect(Self.busiestSecond(source.sends, budget: fast) <= 30)
        #expect(Self.busiestSecond(source.sends, budget: fast) >= 25)
    }

    @Test func a429StormHalvesTheRateAndItRecovers() throws {
        let clock = VirtualClock()
        let budget = RateBudget(name: "apple", rate: 40)
        let stormEnds = 8 * Self.second
        let source = FakeSource(clock: clock, budgets: [budget], latency: 20_000_000, maxAttempts: 50) {
            _,
            _,
            _,
            tick in
            tick >= 2 * Self.second && tick < stormEnds ? .retry(throttled: true, retryAfter: nil, pause: false) : .ok
        }
        let store = InMemoryPipelineStore(count: 2000)
        let pipeline = try Self.pipeline(store, source, Self.options(rate: 40, concurrency: 32, maxAttempts: 50))
        var lowest = 40.0
        var rateAfterStorm: [UInt64: Double] = [:]
        let result = clock.drive(pipeline) { tick in
            let rate = pipeline.currentRate(of: budget) ?? 40
            lowest = min(lowest, rate)
            if tick > stormEnds { rateAfterStorm[tick / Self.second] = rate }
        }
        #expect(result.written == 2000)
        #expect(lowest <= 20, "the rate never halved: lowest \(lowest)")
        #expect(pipeline.currentRate(of: budget) == 40, "the rate did not recover")
        // During the storm, after the first cut, Apple saw at most half the rate.
        let late = source.sends.filter { $0.tick >= 5 * Self.second && $0.tick < stormEnds }
        #expect(Self.busiestSecond(late) <= 21, "\(Self.busiestSecond(late)) in one second during the storm")
        #expect(rateAfterStorm.values.contains { $0 < 40 } && rateAfterStorm.values.contains(40))
    }

    /// The last batch, smaller than `--batch-size`, is written as soon as every item has its result, not at the next
    /// flush tick half a second later: a run (and each round of a worker) ends when its work does.
    @Test func theLastPartialBatchIsWrittenWithoutWaitingForTheFlushTick() throws {
        let clock = VirtualClock()
        let source = FakeSource(clock: clock, budgets: [RateBudget(name: "apple", rate: 1000)])
        let store = InMemoryPipelineStore(count: 30)
        let result = clock.drive(try Self.pipeline(store, source, Self.options(rate: 1000, batchSize: 50)))
        #expect(result.written == 30)
        #expect(store.batches.count == 1)
        // 30 sends at 1,000/s and a 50 ms answer: done in about 0.1 s; the flush tick comes at 0.5 s.
        #expect(result.stats.elapsedSeconds < 0.25, "ended after \(result.stats.elapsedSeconds) s")
    }

    @Test func aFailedBatchWriteIsRetried() throws {
        let clock = VirtualClock()
        let source = FakeSource(clock: clock, budgets: [RateBudget(name: "apple", rate: 200)])
        let store = InMemoryPipelineStore(count: 120, failingWrites: 2)
        let result = clock.drive(try Self.pipeline(store, source, Self.options(rate: 200)))
        #expect(result.stopReason == nil)
        #expect(result.written == 120)
        #expect(store.written.values.allSatisfy { $0.count == 1 })
        #expect(store.writeCalls == store.batches.count + 2)
    }

    @Test func batchWritesThatKeepFailingStopTheRunAsADatabaseFailure() throws {
        let clock = VirtualClock()
        let source = FakeSource(clock: clock, budgets: [RateBudget(name: "apple", rate: 200)])
        let store = InMemoryPipelineStore(count: 300, failingWrites: Int.max)
        let result = clock.drive(try Self.pipeline(store, source, Self.options(rate: 200)))
        guard case .database = result.stopReason else {
            Issue.record("stopped for \(String(describing: result.stopReason))")
            return
        }
        #expect(result.written == 0)
        #expect(store.written.isEmpty)
        #expect(try store.fetchPending(after: 0, limit: 1000).count == 300, "every item stays pending")
        #expect(store.writeCalls >= ReconciliationPipeline.writeAttempts)
    }

    @Test func aConfigurationErrorStopsTheRunEarly() throws {
        let clock = VirtualClock()
        let source = FakeSource(clock: clock, budgets: [RateBudget(name: "apple", rate: 20)]) { id, _, _, _ in
            id == 30 ? .configurationError : .ok
        }
        let store = InMemoryPipelineStore(count: 1000)
        let result = clock.drive(try Self.pipeline(store, source, Self.options(rate: 20)))
        #expect(result.stopReason == .configuration("fake configuration error"))
        #expect(source.sends.count < 60, "\(source.sends.count) requests after a configuration error")
        #expect(store.written[30]?.first?.outcome == .unresolved)
        #expect(try store.fetchPending(after: 0, limit: 2000).count > 900)
    }

    @Test func anOutageStopsTheRunWithinTheWindowAndLeavesUnfinishedItemsPending() throws {
        let clock = VirtualClock()
        let outageStarts = 10 * Self.second
        let source = FakeSource(clock: clock, budgets: [RateBudget(name: "apple", rate: 50)]) { _, _, _, tick in
            tick >= outageStarts ? .unreachable : .ok
        }
        let store = InMemoryPipelineStore(count: 100_000)
        var options = Self.options(rate: 50, concurrency: 32)
        options.outageFailures = 50
        options.outageWindowSeconds = 120
        let result = clock.drive(try Self.pipeline(store, source, options))
        guard case .appleUnreachable(let message) = result.stopReason else {
            Issue.record("stopped for \(String(describing: result.stopReason))")
            return
        }
        #expect(message.hasPrefix("Apple unreachable: Apple (apple), last failure: couldn't connect to server (7)"))
        // The last good answer came just after the outage started: the run stops about 2 minutes later.
        let lastSend = try #require(source.sends.map(\.tick).max())
        #expect(lastSend < outageStarts + 125 * Self.second, "still sending at \(Double(lastSend) / 1e9) s")
        #expect(lastSend > outageStarts + 115 * Self.second, "stopped at \(Double(lastSend) / 1e9) s")
        let written = store.written
        #expect(written.values.allSatisfy { $0.count == 1 })
        #expect(written.count == result.written)
        // Decided before the outage, or unresolved during it; everything else is pending for --resume.
        let pending = try store.fetchPending(after: 0, limit: 200_000)
        #expect(pending.count + written.count == 100_000)
        #expect(pending.count > 90_000, "\(pending.count) pending")
        #expect(result.outcomes[.unchanged, default: 0] >= 400)
        // Requests in flight when the breaker tripped (answered after it) end nothing: their items stay
        // pending rather than unresolved.
        let lastItems = Set(source.sends.filter { $0.tick + 40_000_000 > lastSend }.map(\.subscriptionId))
        #expect(!lastItems.isEmpty && lastItems.allSatisfy { written[$0] == nil })
    }

    @Test func aFewSecondsOfOutageDoNotStopTheRun() throws {
        let clock = VirtualClock()
        let outage = (10 * Self.second)..<(15 * Self.second)
        let source = FakeSource(clock: clock, budgets: [RateBudget(name: "apple", rate: 50)], maxAttempts: 10) {
            _,
            _,
            _,
            tick in
            outage.contains(tick) ? .unreachable : .ok
        }
        let store = InMemoryPipelineStore(count: 1500)
        let result = clock.drive(
            try Self.pipeline(store, source, Self.options(rate: 50, concurrency: 32, maxAttempts: 10))
        )
        #expect(result.stopReason == nil)
        #expect(result.written == 1500)
        #expect(result.outcomes[.unchanged] == 1500)
        // Far more than --outage-failures in a row failed: the count alone does not stop a run.
        #expect(source.sends.filter { outage.contains($0.tick) }.count > 200)
    }
}
