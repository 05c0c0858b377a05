import Foundation
import Postgres
import Reconciler
import Testing

/// Only one run at a time: a second concurrent `run` exits 75 and names the run holding the lock.
@Suite struct RunLockTests {
    @Test func secondConcurrentRunExits75NamingTheHolder() async throws {
        let world = try await EndToEndFixture(subscriptions: 100, seed: 12)
        try await world.startSimulator(["--latency-ms", "200"])
        let conn = try world.connect()
        defer { conn.close() }
        let first = try await world.startRun(["--rate", "5", "--concurrency", "2", "--batch-size", "1"])
        // Frozen (SIGSTOP) once its pipeline writes results (where SIGTERM stops it gracefully), so it is still
        // mid-run however long the second run takes to start.
        let started = try await world.poll(limit: 120) {
            try conn.count("SELECT count(*) AS n FROM reconciliation_runs WHERE status = 'running'") == 1
                && conn.count("SELECT count(*) AS n FROM reconciliation_items WHERE status = 'done'") >= 1
        } then: {
            first.signal(SIGSTOP)
        }
        try #require(started)
        let holder = try #require(
            try conn.queryFirst("SELECT id FROM reconciliation_runs WHERE status = 'running'")?.decode(
                "id",
                as: Int64.self
            )
        )

        let second = try await world.run(["--rate", "5"])
        #expect(second.status == 75, "\(second)")
        #expect(second.stderr.contains("run \(holder)"), "\(second.stderr)")
        #expect(try conn.count("SELECT count(*) AS n FROM reconciliation_runs") == 1)

        // Stop the first run the way an operator would (SIGTERM: finish in-flight requests, stay resumable), thawed
        // with the signal pending.
        first.signal(SIGTERM)
        first.signal(SIGCONT)
        let firstOutcome = await first.wait(limit: 300)
        #expect(firstOutcome.reason == .exit, "\(firstOutcome)")
        #expect(firstOutcome.status == 1, "\(firstOutcome)")
        let status = try conn.queryFirst("SELECT status FROM reconciliation_runs WHERE id = $1", [holder])?
            .decode("status", as: String.self)
        #expect(status == "interrupted")
    }
}
