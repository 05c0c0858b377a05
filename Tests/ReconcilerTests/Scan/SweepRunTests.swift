import CivilTime
import Foundation
import Postgres
import Reconciler
import Testing

/// End to end with the simulator (docs/testing.md): yearly subscriptions refunded or turned off mid-period
/// since the previous night's verification are invisible to the due window (verifyReceipt sends no
/// notifications); with the sweep (`--sweep-days`) every one of them holds Apple's answer within that many
/// nights, and the report shows the sweep apart.
@Suite struct SweepRunTests {
    static let midPeriod: Set<String> = ["mid_period_refund", "mid_period_auto_renew_off"]

    @Test func midPeriodRefundsAndAutoRenewChangesConvergeWithinTheSweepDays() async throws {
        let fixture = try await EndToEndFixture(subscriptions: 1500, seedPriorRuns: true)
        try await fixture.startSimulator()
        let conn = try fixture.connect()
        defer { conn.close() }
        let records = try fixture.truthRecords().filter { Self.midPeriod.contains($0["scenario"] as? String ?? "") }
        #expect(records.count >= 10)

        // Night 0 without a sweep: the window cannot see them; every row matches the truth (they keep what the
        // previous night left), and the run plans no sweep.
        let night0 = try await fixture.run(["--rate", "2000", "--concurrency", "32", "--sweep-days", "0"])
        #expect(night0.status == 0, "\(night0)")
        let truth = try fixture.compareWithTruth()
        #expect(truth.matched == truth.compared, "\(truth.mismatches.prefix(10))")
        #expect(try Self.converged(conn, records).isEmpty == false)
        let firstRun = try Self.lastRunId(conn)
        let summary0 = try fixture.summary(runId: firstRun)
        let selection0 = try #require(summary0["selection"] as? [String: Any])
        #expect(selection0["sweep"] is NSNull)

        // Nights 1 to 3 with --sweep-days 3: all of them converge.
        let start = try #require(RFC3339.parse(fixture.now))
        var sweptAll = 0
        for night in 1...3 {
            let now = RFC3339.string(start.addingTimeInterval(Double(night) * 86_400))
            let outcome = await fixture.runReconciler([
                "run", "--now", now, "--report-dir", fixture.reportDirectory, "--rate", "2000", "--concurrency", "32",
                "--sweep-days", "3",
            ])
            #expect(outcome.status == 0, "night \(night): \(outcome)")
            let runId = try Self.lastRunId(conn)
            let summary = try fixture.summary(runId: runId)
            let selection = try #require(summary["selection"] as? [String: Any])
            let sweep = try #require(selection["sweep"] as? [String: Any], "night \(night): \(selection)")
            let eligible = try #require(sweep["eligible"] as? Int)
            let quota = try #require(sweep["quota"] as? Int)
            let selected = try #require(sweep["selected"] as? Int)
            #expect(quota == (eligible + 2) / 3, "night \(night)")
            #expect(selected <= quota && selected > 0, "night \(night): \(sweep)")
            let byReason = try #require(selection["by_due_reason"] as? [[String: Any]])
            #expect(byReason.first { $0["id"] as? String == "sweep" }?["selected"] as? Int == selected)
            sweptAll += selected
        }
        let problems = try Self.converged(conn, records)
        #expect(problems.isEmpty, "\(problems.prefix(10))")
        #expect(sweptAll > 0)

        // The report page shows the sweep apart from the window.
        let folder = try #require(fixture.reportFolders().last)
        let html = try String(contentsOf: folder.appendingPathComponent("report.html"), encoding: .utf8)
        #expect(html.contains("Why the items were selected"))
        #expect(html.contains("The sweep re-verified"))
    }

    static func lastRunId(_ conn: PostgresConnection) throws -> Int64 {
        try #require(
            try conn.queryFirst("SELECT max(id) AS id FROM reconciliation_runs")?.decode("id", as: Int64?.self)
        )
    }

    /// The mid-period rows whose state, expiry or auto-renew differs from Apple's answer, described.
    static func converged(_ conn: PostgresConnection, _ records: [[String: Any]]) throws -> [String] {
        var problems: [String] = []
        for record in records {
            let otid = try #require(record["original_transaction_id"] as? String)
            let row = try #require(
                try conn.queryFirst(
                    "SELECT state, expires_at, auto_renew FROM subscriptions WHERE original_transaction_id = $1",
                    [otid]
                )
            )
            let state: String? = try row.decode("state")
            let expires: Date? = try row.decode("expires_at")
            let autoRenew: Bool? = try row.decode("auto_renew")
            let wantExpires = (record["expires_at"] as? String).flatMap(RFC3339.parse)
            let sameExpiry = expires.map { e in wantExpires.map { abs($0.timeIntervalSince(e)) < 0.001 } ?? false }
            if state != record["state"] as? String || sameExpiry != true
                || autoRenew != record["auto_renew"] as? Bool
            {
                problems.append(
                    "\(otid) (\(record["scenario"] ?? "")): \(state ?? "nil") \(expires.map(RFC3339.string) ?? "nil") "
                        + "auto_renew \(autoRenew.map(String.init) ?? "nil")"
                )
            }
        }
        return problems
    }
}
