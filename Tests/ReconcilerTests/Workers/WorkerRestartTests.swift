import Foundation
import Postgres
import Reconciler
import TestSupport
import Testing

/// PostgreSQL restarted (`pg_ctl restart -m fast`: every connection terminated) while three workers share a run
/// (docs/architecture.md, "Workers"): each worker reconnects, takes its share of the run lock again, and the three
/// finish the run together. Nothing is lost: every item has exactly one result, the truth matches, the run
/// completes once and its report is written once. The test has a cluster of its own, the only one it restarts.
@Suite struct WorkerRestartTests {
    static let subscriptions = 1200
    /// Shared by the three workers: the 900 items left after the restart take at least 45 s, long enough for every
    /// worker's heartbeat to come back and the one-process run to be tried while the run is still held (at 80 a
    /// loaded machine saw the workers finish before that run started, and the refusal could not be checked).
    static let rate = 20

    @Test func threeWorkersRecoverFromAPostgreSQLRestartAndLoseNothing() async throws {
        let cluster = try await OffPool.run { try ThrowawayPostgres() }
        defer { cluster.stop() }
        let fixture = try await EndToEndFixture(subscriptions: Self.subscriptions, seed: 4245, server: cluster.url)
        try await fixture.startSimulator()
        let workers = try await fixture.startRuns(
            3,
            [
                "--worker", "--heartbeat", "1s", "--lease-timeout", "4s", "--rate", String(Self.rate),
                "--concurrency", "16",
            ]
        )
        let conn = try fixture.connect()
        defer { conn.close() }
        // All three registered (on a loaded machine the third process can start seconds after the first), then a
        // quarter of the items done: the restart meets three workers in the middle of the run.
        let joined = try await fixture.poll(limit: 120) {
            try conn.count("SELECT count(*) AS n FROM run_workers") == 3
        }
        #expect(joined, "three workers registered")
        let started = try await fixture.poll(limit: 120) {
            try conn.count("SELECT count(*) AS n FROM reconciliation_items WHERE status = 'done'")
                >= Self.subscriptions / 4
        }
        #expect(started)
        let doneBefore = try conn.count("SELECT count(*) AS n FROM reconciliation_items WHERE status = 'done'")

        try await OffPool.run { try cluster.restart() }
        let restartedAt = try #require(try conn.queryFirst("SELECT now() AS t")?.decode("t", as: Date.self))

        // After the restart, the workers hold the run again: a one-process run started now is refused, once each
        // worker's heartbeat has reconnected and taken its shared lock again (under a loaded suite that can take
        // tens of seconds; a worker whose connection never recovers fails it).
        #expect(
            try await fixture.poll(limit: 120) {
                try conn.count("SELECT count(*) AS n FROM run_workers WHERE heartbeat_at > $1", [restartedAt]) == 3
            },
            "every worker's heartbeat is back after the restart"
        )
        try #require(
            try conn.count("SELECT count(*) AS n FROM reconciliation_runs WHERE status = 'running'") == 1,
            "run 1 is still running when the one-process run is tried (else the refusal cannot be checked)"
        )
        let plain = try await fixture.run(["--rate", "50"])
        #expect(plain.status == 75, "a one-process run must be refused while the workers hold the run: \(plain)")

        let outcomes = await workers.wait(limit: 1800)
        for (index, outcome) in outcomes.enumerated() {
            #expect(outcome.status == 0, "worker \(index): \(outcome)")
        }
        #expect(try conn.count("SELECT count(*) AS n FROM reconciliation_items WHERE status = 'done'") > doneBefore)

        // One run, completed once; every item with exactly one result.
        #expect(try conn.count("SELECT count(*) AS n FROM reconciliation_runs") == 1)
        #expect(try conn.count("SELECT count(*) AS n FROM reconciliation_runs WHERE status = 'completed'") == 1)
        #expect(try conn.count("SELECT count(*) AS n FROM reconciliation_items WHERE status <> 'done'") == 0)
        #expect(try conn.count("SELECT count(*) AS n FROM reconciliation_items") == Self.subscriptions)
        #expect(
            try conn.count("SELECT done_count AS n FROM reconciliation_runs") == Self.subscriptions,
            "the run's count of written results equals its items: none written twice, none lost"
        )
        #expect(try conn.count("SELECT count(*) AS n FROM run_workers WHERE stopped_at IS NULL") == 0)
        #expect(
            try conn.count("SELECT count(*) AS n FROM reconciliation_items WHERE outcome = 'unresolved'") == 0
        )

        // The truth, as if nothing had happened.
        let truth = try fixture.compareWithTruth()
        #expect(truth.compared == Self.subscriptions)
        #expect(truth.matched == truth.compared, "\(truth.mismatches.prefix(5))")

        // The report: written once, by the worker that completed the run.
        let folders = try FileManager.default.contentsOfDirectory(atPath: fixture.reportDirectory)
            .filter { $0.hasSuffix("_run-1") }
        #expect(folders.count == 1, "\(folders)")
        #expect(outcomes.filter { $0.stderr.contains("run 1 completed") }.count == 1, "\(outcomes.map(\.stderr))")
    }
}
