import Foundation
import Postgres
import Reconciler
import TestSupport
import Testing

/// A run that loses its run lock across a PostgreSQL restart stops sending and writing at once
/// (docs/architecture.md, "The run lock"). To make the second run win the lock every time, the first run is frozen
/// (SIGSTOP) across the restart until the second run holds the lock and has written results, then thawed: before
/// the lock watch and the batch fence, it went on asking Apple and writing until its next 10 s heartbeat.
@Suite struct RunLockLossTests {
    @Test func aRunThatLostItsLockWritesNothingMoreAndStopsWithExit75() async throws {
        let cluster = try await OffPool.run { try ThrowawayPostgres() }
        defer { cluster.stop() }
        let fixture = try await EndToEndFixture(subscriptions: 600, seed: 4246, server: cluster.url)
        try await fixture.startSimulator()
        let arguments = ["--rate", "40", "--concurrency", "8"]
        let first = try await fixture.startRun(arguments)
        let conn = try fixture.connect()
        defer { conn.close() }
        let doneSQL = "SELECT count(*) AS n FROM reconciliation_items WHERE run_id = $1 AND status = 'done'"
        let frozen = try await fixture.poll(limit: 120) {
            try conn.count(doneSQL, [Int64(1)]) >= 60
        } then: {
            first.signal(SIGSTOP)
        }
        #expect(frozen)
        try await Task.sleep(for: .milliseconds(500))
        try await OffPool.run { try cluster.restart() }
        let doneByFirst = try conn.count(doneSQL, [Int64(1)])

        let second = try await fixture.startRun(arguments)
        let secondWorking = try await fixture.poll(limit: 60) {
            try conn.count(doneSQL, [Int64(2)]) >= 40
        }
        #expect(secondWorking, "the second run took the lock and wrote results")
        first.signal(SIGCONT)
        let firstOutcome = await first.wait(limit: 300)
        let secondOutcome = await second.wait(limit: 1800)

        #expect(firstOutcome.status == 75, "the run that lost its lock: \(firstOutcome)")
        #expect(
            firstOutcome.stderr.contains("lost the run lock") || firstOutcome.stderr.contains("no longer this process")
        )
        #expect(secondOutcome.status == 0, "\(secondOutcome)")
        // Nothing written by the first run after the second took over, and no subscription written by both.
        #expect(try conn.count(doneSQL, [Int64(1)]) == doneByFirst)
        #expect(
            try conn.count(
                """
                SELECT count(*) AS n FROM reconciliation_items a JOIN reconciliation_items b USING (subscription_id)
                 WHERE a.run_id = 1 AND b.run_id = 2 AND a.status = 'done' AND b.status = 'done'
                """
            ) == 0
        )
        #expect(
            try conn.count("SELECT count(*) AS n FROM reconciliation_runs WHERE id = 1 AND status = 'running'") == 0
        )
        // The thawed run sent nothing new beside the second. The requests it had admitted when it was frozen (at most
        // its --concurrency, 8) may reach the simulator only after the thaw, in the second run's seconds: so at most
        // 40 + 8 in a second, where two runs sending side by side made 81.
        // Counted in seconds of the wall clock: only where the test runs alone (`WallClockRates`).
        if WallClockRates.checked {
            let peak = try #require(try await fixture.simulatorStats()["peak_requests_per_second"] as? Int)
            #expect(peak <= 48, "peak \(peak) requests in one second at --rate 40")
        }
    }
}
