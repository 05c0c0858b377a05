import CivilTime
import Foundation
import Postgres
import Reconciler
import Testing

/// The nightly run end to end: the real binaries, a real PostgreSQL, the simulator on loopback.
@Suite struct EndToEndTests {
    @Test func tenThousandSubscriptionsMatchTheTruthAfterOneRun() async throws {
        // Rows a previous night left revoked (the customer bought again since) must be verified again.
        let world = try await EndToEndFixture(subscriptions: 10_000, seedPriorRuns: true)
        try await world.startSimulator()
        // Without the sweep, so the counts below are the window's alone (SweepRunTests covers the sweep).
        let outcome = try await world.run(["--rate", "2000", "--concurrency", "64", "--sweep-days", "0"])
        #expect(outcome.status == 0, "\(outcome)")
        #expect(outcome.reason == .exit)

        let report = try world.compareWithTruth()
        #expect(report.compared == (try world.comparableTruthCount()))
        #expect(report.compared > 9_800)
        #expect(report.matched == report.compared, "mismatches: \(report.mismatches.prefix(10))")
        #expect(report.missing == 0)
        // 21010 ends the entitlement (compared apart from the truth file: see EndToEndFixture).
        let deleted = try world.accountNotFoundProblems()
        #expect(deleted.checked > 0)
        #expect(deleted.problems.isEmpty, "\(deleted.problems.prefix(5))")
        // Every scenario of the simulator is covered by the population.
        #expect(report.byScenario.count >= 10, "scenarios: \(report.byScenario.keys.sorted())")

        let truths = try world.truthRecords()
        // The mid-period rows (verified last night, expiry months away) are not due: verifyReceipt cannot see
        // what changed; the comparison above checked they kept what the previous night left.
        let notDue = truths.filter { $0["expect"] as? String == "not_due" }.count
        #expect(notDue > 50)
        let due = 10_000 - notDue
        let expectedLedger = truths.reduce(0) { sum, truth in
            let ok =
                (truth["apple_status"] as? NSNumber)?.intValue == 0
                && truth["bundle_id"] as? String == EndToEndFixture.bundleId && truth["expect"] as? String != "not_due"
            return sum + (ok ? (truth["transaction_count"] as? NSNumber)?.intValue ?? 0 : 0)
        }
        let conn = try world.connect()
        defer { conn.close() }
        #expect(expectedLedger > 10_000)
        #expect(try conn.count("SELECT count(*) AS n FROM subscription_transactions") == expectedLedger)
        #expect(try conn.count("SELECT count(*) AS n FROM reconciliation_items") == due)
        #expect(
            try conn.count(
                "SELECT count(*) AS n FROM reconciliation_items WHERE status = 'done' AND outcome IS NOT NULL"
            )
                == due
        )
        #expect(try conn.count("SELECT count(*) AS n FROM reconciliation_runs WHERE status = 'completed'") == 1)

        let folders = world.reportFolders()
        try #require(folders.count == 1)
        let files = Set(try FileManager.default.contentsOfDirectory(atPath: folders[0].path))
        #expect(
            files.isSuperset(of: ["summary.json", "changes.csv", "transactions.csv", "errors.csv", "report.html"]),
            "\(files)"
        )
        let runId = try #require(
            try conn.queryFirst("SELECT max(id) AS id FROM reconciliation_runs")?.decode("id", as: Int64.self)
        )
        let summary = try world.summary(runId: runId)
        let outcomes = try #require(summary["by_outcome"] as? [String: Int])
        #expect(outcomes.values.reduce(0, +) == due)
        // The completed run recorded its day's trend snapshot and refreshed the trends beside the folders
        // (docs/reports.md, "Trends across nights").
        #expect(try conn.count("SELECT count(*) AS n FROM trend_snapshots WHERE run_id = $1", [runId]) > 0)
        // Its stocks are the states the run decided.
        #expect(
            try conn.count("SELECT COALESCE(sum(active + grace_period + billing_retry), 0) AS n FROM trend_snapshots")
                == conn.count(
                    """
                    SELECT count(*) AS n FROM reconciliation_items
                     WHERE run_id = $1 AND new_state IN ('active', 'grace_period', 'billing_retry')
                       AND outcome NOT IN ('rejected', 'unresolved', 'conflict')
                    """,
                    [runId]
                )
        )
        let trends = try String(contentsOfFile: world.reportDirectory + "/trends.html", encoding: .utf8)
        #expect(trends.contains("<svg id=\"chart-trend-states\""))
        #expect(FileManager.default.fileExists(atPath: world.reportDirectory + "/trends.csv"))
        #expect(outcomes["unresolved"] == 0)
    }

    @Test func dryRunWritesNothingButRecordsItemsAndMarkedReports() async throws {
        let world = try await EndToEndFixture(subscriptions: 200, seed: 77)
        try await world.startSimulator()
        let conn = try world.connect()
        defer { conn.close() }
        let before = try businessSnapshot(conn)
        let outcome = try await world.run(["--rate", "2000", "--concurrency", "64", "--dry-run"])
        #expect(outcome.status == 0, "\(outcome)")
        #expect(try businessSnapshot(conn) == before)
        #expect(try conn.count("SELECT count(*) AS n FROM subscription_transactions") == 0)
        #expect(try conn.count("SELECT count(*) AS n FROM reconciliation_items WHERE status = 'done'") == 200)
        #expect(try conn.count("SELECT count(*) AS n FROM reconciliation_runs WHERE dry_run") == 1)
        // What it would have added to the ledger is listed for the report.
        #expect(try conn.count("SELECT count(*) AS n FROM dry_run_transactions") > 0)
        let runId = try #require(
            try conn.queryFirst("SELECT max(id) AS id FROM reconciliation_runs")?.decode("id", as: Int64.self)
        )
        let summary = try world.summary(runId: runId)
        #expect(summary["dry_run"] as? Bool == true)
        let folder = try #require(world.reportFolders().first)
        let html = try String(contentsOf: folder.appendingPathComponent("report.html"), encoding: .utf8)
        #expect(html.lowercased().contains("dry run"))
    }

    @Test func rowChangedByTheAppDuringTheRunEndsAsConflictAndKeepsTheAppsData() async throws {
        let world = try await EndToEndFixture(subscriptions: 20, seed: 5)
        try await world.startSimulator(["--latency-ms", "200"])
        let conn = try world.connect()
        defer { conn.close() }
        // The last row in due-scan order (never-verified rows are scanned by id) is verified last.
        let target = try #require(
            try conn.queryFirst("SELECT id, original_transaction_id FROM subscriptions ORDER BY id DESC LIMIT 1")
        )
        let targetId: Int64 = try target.decode("id")
        let run = try await world.startRun(["--rate", "5", "--concurrency", "1", "--batch-size", "1"])
        // The pipeline reads pending items (with their row versions) in pages of at least 100: once one item
        // is done, all 20 were read. Then change the last row as the app would, before its turn comes (the run frozen
        // meanwhile, so its turn cannot come first however slow the machine).
        let selected = try await world.poll(limit: 60) {
            try conn.count("SELECT count(*) AS n FROM reconciliation_items WHERE status = 'done'") >= 1
                && conn.count(
                    "SELECT count(*) AS n FROM reconciliation_items WHERE subscription_id = $1 AND status = 'pending'",
                    [targetId]
                ) == 1
        } then: {
            run.signal(SIGSTOP)
        }
        try #require(selected)
        try conn.execute(
            "UPDATE subscriptions SET state = 'active', expires_at = '2030-01-01T00:00:00Z', auto_renew = true WHERE id = $1",
            [targetId]
        )
        run.signal(SIGCONT)
        let outcome = await run.wait()
        #expect(outcome.status == 0 || outcome.status == 2, "\(outcome)")
        let item = try #require(
            try conn.queryFirst(
                "SELECT status, outcome FROM reconciliation_items WHERE subscription_id = $1",
                [targetId]
            )
        )
        #expect(try item.decode("outcome", as: String?.self) == "conflict")
        let row = try #require(
            try conn.queryFirst("SELECT state, expires_at, auto_renew FROM subscriptions WHERE id = $1", [targetId])
        )
        #expect(try row.decode("state", as: String?.self) == "active")
        #expect(try row.decode("expires_at", as: Date?.self) == RFC3339.parse("2030-01-01T00:00:00Z"))
        #expect(try row.decode("auto_renew", as: Bool?.self) == true)
    }

    /// Every business column of every subscription plus the ledger, as text, in id order.
    private func businessSnapshot(_ conn: PostgresConnection) throws -> [String] {
        try conn.query(
            """
            SELECT concat_ws('|', id, state, expires_at, product_id, auto_renew, auto_renew_product_id,
                   grace_period_expires_at, latest_receipt, last_verified_at, last_verify_status, version) AS line
              FROM subscriptions LEFT JOIN subscription_checks ON subscription_id = id ORDER BY id
            """
        ).map { try $0.decode("line", as: String.self) }
    }
}
