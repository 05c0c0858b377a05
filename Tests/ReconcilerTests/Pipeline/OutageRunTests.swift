import Foundation
import Postgres
import Reconciler
import Testing

/// An Apple outage end to end (docs/architecture.md, "Apple outages"): the simulator goes away mid-run, the
/// run stops within the outage window as `partial` with exit 69 and its unfinished items pending, and once
/// the simulator is back `run --resume` finishes the same run with every row as the truth says.
@Suite struct OutageRunTests {
    @Test func anOutageStopsTheRunAndResumeFinishesItWithTheTruth() async throws {
        let world = try await EndToEndFixture(subscriptions: 600)
        try await world.startSimulator()
        // Slow enough (40/s) that the simulator is gone long before the run could finish. A stopped simulator refuses
        // connections at once; the request timeout is long enough that a busy machine's slow answers (in the
        // resume too, which keeps these settings) never look like an outage.
        let running = try await world.startRun([
            "--rate", "40", "--concurrency", "8", "--outage-window", "3s", "--outage-failures", "5",
            "--max-attempts", "2", "--request-timeout", "10",
        ])
        let conn = try world.connect()
        defer { conn.close() }
        func count(_ sql: String) throws -> Int { try conn.queryFirst(sql)?.decode("n", as: Int.self) ?? -1 }
        // Apple goes away at once when 40 are done (from the polling thread); the run's end is timed by its exit.
        nonisolated(unsafe) var stopped = ContinuousClock.now
        try await world.poll(limit: 120) {
            try conn.count("SELECT count(*) AS n FROM reconciliation_items WHERE status = 'done'") >= 40
        } then: {
            world.simulator?.stop()
            stopped = .now
        }
        let first = await running.wait(limit: 600)
        #expect(first.status == 69, "\(first)")
        let ended = try #require(running.exitedAt)
        #expect(ended - stopped < .seconds(60), "the breaker should stop the run within its window")
        #expect(
            first.stderr.contains("Apple unreachable: 127.0.0.1"),
            Comment(rawValue: String(first.stderr.suffix(2000)))
        )
        #expect(try count("SELECT count(*) AS n FROM reconciliation_runs WHERE status = 'partial'") == 1)
        let pending = try count("SELECT count(*) AS n FROM reconciliation_items WHERE status <> 'done'")
        #expect(pending > 100, "most items were left for the resume")

        // Apple is back (a new port: the run's URLs come from today's settings).
        try await world.startSimulator()
        let resumed = await world.runReconciler(
            ["run", "--resume", "--report-dir", world.reportDirectory, "--rate", "2000"]
        )
        // Items that used up their attempts in the seconds before the breaker tripped were written unresolved
        // (docs/architecture.md, "Apple outages"): above --max-unresolved that is exit 2.
        #expect([0, 2].contains(resumed.status), "\(resumed)")
        #expect(try count("SELECT count(*) AS n FROM reconciliation_runs") == 1)
        #expect(try count("SELECT count(*) AS n FROM reconciliation_items WHERE status <> 'done'") == 0)
        // Those unresolved rows were left untouched; the next night finishes them.
        let next = try await world.run()
        #expect([0, 2].contains(next.status), "\(next)")
        let report = try world.compareWithTruth()
        #expect(report.matched == report.compared, "\(report.mismatches.prefix(5))")
    }
}
