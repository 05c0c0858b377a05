import CivilTime
import Foundation
import Postgres
import Reconciler
import Testing

/// Several workers on one run (`run --worker`, docs/architecture.md "Workers"), end to end with the real binaries:
/// three worker processes agree on one run, share its items and the app's rate limit (measured at the simulator),
/// one of them is killed with SIGKILL halfway, and the other two finish its items once its leases run out: every
/// item has exactly one result, the truth matches, the run completes once and its report is written once.
@Suite struct WorkerRunTests {
    static let subscriptions = 1500
    static let rate = 60

    @Test func threeWorkersShareARunAndFinishTheItemsOfOneKilledHalfway() async throws {
        let fixture = try await EndToEndFixture(subscriptions: Self.subscriptions, seed: 4242)
        // Apple's limit for the app, well above the rate, and only where the test runs alone (`WallClockRates.limit`):
        // beside every other end-to-end test a starved process's requests reach the simulator bunched up. The
        // one-second checks run alone on release binaries (`WallClockRates`, and
        // `workersTogetherKeepToTheAppsLimitInEverySecond`: CI's rate stages).
        try await fixture.startSimulator(WallClockRates.limit("--max-rps", Self.rate * 2))
        let arguments = [
            "--worker", "--heartbeat", "1s", "--lease-timeout", "4s", "--rate", String(Self.rate), "--concurrency",
            "16",
        ]
        let started = Date()
        let workers = try await fixture.startRuns(3, arguments)
        let conn = try fixture.connect()
        defer { conn.close() }

        // Halfway: all three registered and working, each worker's results so far recorded by its heartbeat (as `runs`
        // shows them during the run); then one killed without warning, at once (from the polling thread).
        let reachedHalf = try await fixture.poll(limit: 120) {
            try conn.count("SELECT count(*) AS n FROM reconciliation_items WHERE status = 'done'")
                >= Self.subscriptions / 3
                && conn.count("SELECT count(*) AS n FROM run_workers WHERE written > 0") == 3
        } then: {
            workers[1].signal(SIGKILL)
        }
        #expect(reachedHalf, "a third done, and every worker's results so far recorded by its heartbeat")
        #expect(try conn.count("SELECT count(*) AS n FROM run_workers") == 3)
        let outcomes = await workers.wait(limit: 1800)
        let wall = Date().timeIntervalSince(started)
        #expect(outcomes[1].killedBySIGKILL, "\(outcomes[1])")
        for index in [0, 2] { #expect(outcomes[index].status == 0, "worker \(index): \(outcomes[index])") }

        // One run, completed once, every item with exactly one result.
        #expect(try conn.count("SELECT count(*) AS n FROM reconciliation_runs") == 1)
        #expect(try conn.count("SELECT count(*) AS n FROM reconciliation_runs WHERE status = 'completed'") == 1)
        #expect(try conn.count("SELECT count(*) AS n FROM reconciliation_items WHERE status = 'pending'") == 0)
        #expect(try conn.count("SELECT count(*) AS n FROM reconciliation_items") == Self.subscriptions)
        #expect(
            try conn.count("SELECT done_count AS n FROM reconciliation_runs") == Self.subscriptions,
            "the run's count of written results equals its items: none written twice"
        )
        // The killed worker's items went to the others; all three wrote results.
        let written = try conn.query("SELECT worker_id, written, stopped_at IS NULL AS killed FROM run_workers")
        #expect(try written.filter { try $0.decode("killed", as: Bool.self) }.count == 1)
        #expect(
            try written.filter { try !$0.decode("killed", as: Bool.self) }
                .allSatisfy { try $0.decode("written", as: Int.self) > 0 }
        )
        // The workers' counts add up to no more than the run's: the killed one's stop at its last heartbeat.
        #expect(try conn.count("SELECT sum(written) AS n FROM run_workers") <= Self.subscriptions)
        // Each worker finished chunks of its own (a chunk keeps the worker that finished it); none is left unfinished.
        #expect(try conn.count("SELECT count(DISTINCT leased_by) AS n FROM run_chunks") == 3)
        #expect(try conn.count("SELECT count(*) AS n FROM run_chunks WHERE remaining <> 0") == 0)

        // The truth, as a one-process run would have it.
        let truth = try fixture.compareWithTruth()
        #expect(truth.compared == Self.subscriptions)
        #expect(truth.matched == truth.compared, "\(truth.mismatches.prefix(5))")

        // Together about the app's limit, never the three workers' full rates added up (3 x 60). On any machine: the
        // items took at least as long as at twice the app's rate (load only lengthens a run; at the three rates added
        // up they would take 8 s). Alone (CI's rate stage), also at the simulator in every second.
        #expect(wall >= Double(Self.subscriptions) / Double(2 * Self.rate), "the workers ran \(wall) s")
        let stats = try await fixture.simulatorStats()
        if WallClockRates.checked {
            #expect(try #require(stats["peak_requests_per_second"] as? Int) <= Self.rate + Self.rate / 4, "\(stats)")
        }

        // The run's statistics count the killed worker's requests too (up to its last heartbeat, a second before
        // the kill at most), and its elapsed time is the longest worker's, not the three added up.
        let simulatorRequests = try #require(stats["requests_total"] as? Int)
        let run = try #require(
            try conn.queryFirst(
                """
                SELECT (apple_stats->>'requests')::int AS requests, (apple_stats->>'elapsed_seconds')::float8 AS elapsed
                  FROM reconciliation_runs
                """
            )
        )
        let requests: Int = try run.decode("requests")
        #expect(requests <= simulatorRequests)
        #expect(Double(requests) >= 0.95 * Double(simulatorRequests), "run \(requests), simulator \(simulatorRequests)")
        let elapsed: Double = try run.decode("elapsed")
        #expect(elapsed > 0 && elapsed <= wall, "elapsed \(elapsed) s, the workers ran \(wall) s")

        // The report: written once, by the worker that completed the run.
        let folders = try FileManager.default.contentsOfDirectory(atPath: fixture.reportDirectory)
            .filter { $0.hasSuffix("_run-1") }
        #expect(folders.count == 1, "\(folders)")
        let completions = outcomes.filter { $0.stderr.contains("run 1 completed") }
        #expect(completions.count == 1, "\(outcomes.map(\.stderr))")
    }

    static let slowEnabled = ProcessInfo.processInfo.environment["RENEWAL_RECONCILER_SLOW_TESTS"] == "1"

    /// Three workers at `--rate 100` for about 30 s with nothing else running, measured by the simulator (the
    /// witness) as `RateLimitEndToEndTests` measures one process: at most the limit in any second (each worker's
    /// send window holds a slot until a second after the answer, at its share of the rate), no 429.
    @Test(
        .enabled(
            if: slowEnabled,
            "set RENEWAL_RECONCILER_SLOW_TESTS=1 and RENEWAL_RECONCILER_BIN_DIR=.build/release (takes ~40 s)"
        )
    )
    func workersTogetherKeepToTheAppsLimitInEverySecond() async throws {
        let rate = 100
        let fixture = try await EndToEndFixture(subscriptions: 3000, seed: 4244)
        try await fixture.startSimulator(["--max-rps", String(rate)])
        let workers = try await fixture.startRuns(
            3,
            ["--worker", "--heartbeat", "1s", "--lease-timeout", "4s", "--rate", String(rate), "--concurrency", "32"]
        )
        let outcomes = await workers.wait(limit: 1800)
        for outcome in outcomes { #expect(outcome.status == 0, "\(outcome)") }
        let stats = try await fixture.simulatorStats()
        #expect(stats["rate_limited"] as? Int == 0, "\(stats)")
        #expect(try #require(stats["peak_requests_per_second"] as? Int) <= rate, "\(stats)")
        #expect(try #require(stats["requests_total"] as? Int) >= 3000)
        let truth = try fixture.compareWithTruth()
        #expect(truth.matched == truth.compared, "\(truth.mismatches.prefix(5))")
    }

    @Test func aOneProcessRunIsRefusedWhileWorkersHoldTheRunAndALateWorkerFindsItDone() async throws {
        let fixture = try await EndToEndFixture(subscriptions: 300, seed: 4243)
        try await fixture.startSimulator(["--latency-ms", "40"])
        let worker = try await fixture.startRun([
            "--worker", "--heartbeat", "1s", "--lease-timeout", "4s", "--rate", "50",
        ])
        let conn = try fixture.connect()
        defer { conn.close() }
        #expect(try await fixture.poll(limit: 60) { try conn.count("SELECT count(*) AS n FROM run_workers") == 1 })
        let plain = try await fixture.run(["--rate", "50"])
        #expect(plain.status == 75, "\(plain)")
        #expect(plain.stderr.contains("run 1"), "\(plain.stderr)")
        let done = await worker.wait(limit: 600)
        #expect(done.status == 0, "\(done)")
        #expect(try conn.count("SELECT count(*) AS n FROM reconciliation_runs WHERE status = 'completed'") == 1)

        // A worker whose timer fired after the night's worker run completed has nothing to do: no second run.
        let late = try await fixture.run(["--worker", "--heartbeat", "1s", "--lease-timeout", "4s", "--rate", "50"])
        #expect(late.status == 0, "\(late)")
        #expect(late.stderr.contains("worker run 1"), "\(late.stderr)")
        #expect(late.stderr.contains("has completed within --join-window"), "\(late.stderr)")
        #expect(try conn.count("SELECT count(*) AS n FROM reconciliation_runs") == 1)
        #expect(try conn.count("SELECT count(*) AS n FROM run_workers") == 1)
        // --join-window 0 starts a new one.
        let again = try await fixture.run([
            "--worker", "--heartbeat", "1s", "--lease-timeout", "4s", "--rate", "50", "--join-window", "0",
        ])
        #expect(again.status == 0, "\(again)")
        #expect(try conn.count("SELECT count(*) AS n FROM reconciliation_runs WHERE status = 'completed'") == 2)
        // The next night (as-of one day later) is a new run.
        let nextNight = try #require(RFC3339.parse(fixture.now)).addingTimeInterval(86_400)
        let next = await fixture.runReconciler([
            "run", "--now", RFC3339.string(nextNight), "--report-dir", fixture.reportDirectory, "--worker",
            "--heartbeat", "1s", "--lease-timeout", "4s", "--rate", "50",
        ])
        #expect(next.status == 0, "\(next)")
        #expect(try conn.count("SELECT count(*) AS n FROM reconciliation_runs WHERE status = 'completed'") == 3)
    }
}
