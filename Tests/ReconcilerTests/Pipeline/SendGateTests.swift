import Foundation
import Logging
import Testing

@testable import Reconciler

/// The pipeline asks its send gate (the run lock's watch, docs/architecture.md "The run lock") before every send
/// window, and stops at once when its store says the run is no longer this process's; each batch carries the
/// requests made so far. In-process, on a virtual clock.
@Suite struct SendGateTests {
    static let second: UInt64 = 1_000_000_000

    /// Answers by virtual time: `.wait` inside `holdFrom..<holdUntil`, `.lost` from `lostAt` on, else `.go`.
    final class ScriptedGate: SendGate, @unchecked Sendable {
        let clock: VirtualClock
        var hold: Range<UInt64>?
        var lostAt: UInt64?
        init(clock: VirtualClock) { self.clock = clock }
        func sendPermission() -> SendPermission {
            let now = clock.now()
            if let lostAt, now >= lostAt { return .lost("lost the run lock (test)") }
            if let hold, hold.contains(now) { return .wait }
            return .go
        }
    }

    static func pipeline(
        _ store: InMemoryPipelineStore,
        _ source: FakeSource,
        gate: ScriptedGate?
    ) throws -> ReconciliationPipeline {
        try ReconciliationPipeline(
            store: store,
            source: source,
            options: ReconciliationPipelineTests.options(rate: 50, concurrency: 8, batchSize: 25),
            logger: ReconciliationPipelineTests.quiet,
            clock: source.clock,
            sendGate: gate
        )
    }

    @Test func noSendWhileTheLockIsUnconfirmedAndEveryItemOnceAfter() throws {
        let clock = VirtualClock()
        let source = FakeSource(clock: clock, budgets: [RateBudget(name: "apple", rate: 50)], latency: 5_000_000)
        let gate = ScriptedGate(clock: clock)
        let start = clock.now()
        gate.hold = (start + 2 * Self.second)..<(start + 5 * Self.second)
        let store = InMemoryPipelineStore(count: 300)
        let result = clock.drive(try Self.pipeline(store, source, gate: gate))
        #expect(result.stopReason == nil)
        #expect(store.written.count == 300)
        #expect(store.written.values.allSatisfy { $0.count == 1 })
        let held = try #require(gate.hold)
        let sentWhileHeld = source.sends.filter { held.contains($0.tick) }.count
        #expect(sentWhileHeld == 0, "\(sentWhileHeld) requests sent while the lock was unconfirmed")
        // And the window still holds right after the pause: no burst of the held sends.
        #expect(ReconciliationPipelineTests.busiestSecond(source.sends) <= 50)
    }

    @Test func aLostLockStopsSendingAtOnceAndLeavesTheRestPending() throws {
        let clock = VirtualClock()
        let source = FakeSource(clock: clock, budgets: [RateBudget(name: "apple", rate: 50)], latency: 5_000_000)
        let gate = ScriptedGate(clock: clock)
        let lostAt = clock.now() + 3 * Self.second
        gate.lostAt = lostAt
        let store = InMemoryPipelineStore(count: 300)
        let result = clock.drive(try Self.pipeline(store, source, gate: gate))
        #expect(result.stopReason == .interrupted("lost the run lock (test)"))
        #expect(source.sends.allSatisfy { $0.tick < lostAt }, "a request sent after the lock was lost")
        #expect(store.written.count < 300 && store.written.count > 100)
        #expect(store.written.values.allSatisfy { $0.count == 1 })
    }

    @Test func aBatchRefusedAsNoLongerOursStopsTheRunWithoutAnotherWrite() throws {
        let clock = VirtualClock()
        let source = FakeSource(clock: clock, budgets: [RateBudget(name: "apple", rate: 50)], latency: 5_000_000)
        let store = InMemoryPipelineStore(count: 300)
        store.ownershipLostAfter = 2
        let result = clock.drive(try Self.pipeline(store, source, gate: nil))
        guard case .interrupted(let why)? = result.stopReason else {
            Issue.record("stopped with \(String(describing: result.stopReason))")
            return
        }
        #expect(why.contains("no longer this process's"))
        #expect(store.batches.count == 2)
        #expect(store.writeCalls == 3, "written again after the run was found to be another's")
        #expect(result.written == 50)
    }

    @Test func eachBatchCarriesTheRequestsMadeSoFar() throws {
        let clock = VirtualClock()
        let source = FakeSource(clock: clock, budgets: [RateBudget(name: "apple", rate: 50)], latency: 5_000_000) {
            id,
            attempt,
            _,
            _ in
            id % 9 == 0 && attempt == 1 ? .retry(throttled: false, retryAfter: nil, pause: false) : .ok
        }
        let store = InMemoryPipelineStore(count: 200)
        let result = clock.drive(try Self.pipeline(store, source, gate: nil))
        let counts = store.statsWritten
        #expect(counts.count == store.batches.count && counts.count >= 8)
        #expect(counts == counts.sorted(), "a batch carried fewer requests than the one before")
        // A batch's count covers at least the requests behind the results written so far.
        var behind = 0
        for (batch, count) in zip(store.batches, counts) {
            behind += batch.compactMap { store.written[$0]?.first?.attempts }.reduce(0, +)
            #expect(count >= behind)
        }
        #expect(counts.last == result.stats.requests)
    }
}
