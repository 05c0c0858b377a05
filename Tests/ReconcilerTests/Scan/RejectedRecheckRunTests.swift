import CivilTime
import Foundation
import Postgres
import Reconciler
import Testing

/// End to end with the simulator (docs/testing.md): a Sandbox row is asked in the sandbox first, and the
/// rows Apple refused for good on the first night (21003, 21002 through the retry budget, another app's
/// receipt) cost no request on the next night.
@Suite struct RejectedRecheckRunTests {
    static let scenarios: Set<String> = ["unauthenticatable", "malformed_receipt", "foreign_app"]

    static func appleStatusCount(_ stats: [String: Any], path: String, status: String) -> Int {
        let paths = stats["paths"] as? [String: Any]
        let entry = paths?[path] as? [String: Any]
        return (entry?["apple_status"] as? [String: Int])?[status] ?? 0
    }

    @Test func permanentlyRejectedRowsAreNotAskedTheNextNightAndSandboxRowsGoToTheSandboxFirst() async throws {
        let fixture = try await EndToEndFixture(subscriptions: 600)
        try await fixture.startSimulator()
        let conn = try fixture.connect()
        defer { conn.close() }

        let first = try await fixture.run(["--rate", "2000", "--concurrency", "32", "--max-attempts", "2"])
        #expect(first.status == 0, "\(first)")
        let truth = try fixture.compareWithTruth()
        #expect(truth.matched == truth.compared, "\(truth.mismatches.prefix(10))")

        // Every row is stored with its real environment: no receipt was sent to production to learn 21007.
        let firstStats = try await fixture.simulatorStats()
        #expect(Self.appleStatusCount(firstStats, path: "/verifyReceipt", status: "21007") == 0, "\(firstStats)")
        let sandboxRows = try conn.count("SELECT count(*) AS n FROM subscriptions WHERE environment = 'Sandbox'")
        #expect(sandboxRows > 0)
        let sandboxAsked = (firstStats["paths"] as? [String: Any])?["/sandbox/verifyReceipt"] as? [String: Any]
        #expect((sandboxAsked?["requests"] as? Int ?? 0) >= sandboxRows, "\(firstStats)")

        // The permanently refused rows are rejected with a next check.
        let refused = Set(
            try fixture.truthRecords().compactMap { record -> String? in
                guard let scenario = record["scenario"] as? String, Self.scenarios.contains(scenario) else {
                    return nil
                }
                return record["original_transaction_id"] as? String
            }
        )
        #expect(!refused.isEmpty)
        let scheduled = Set(
            try conn.query(
                """
                SELECT original_transaction_id FROM subscriptions JOIN subscription_checks ON subscription_id = id
                 WHERE next_check_at IS NOT NULL AND rejected_count = 1
                   AND last_verify_status IN ('rejected', 'invalid_receipt')
                """
            ).map { try $0.decode("original_transaction_id", as: String.self) }
        )
        #expect(refused.isSubset(of: scheduled), "\(refused.subtracting(scheduled))")

        // The second night, a day later: none of them is selected, and Apple sees no 21003 or 21002 again.
        let nextNight = RFC3339.string(try #require(RFC3339.parse(fixture.now)).addingTimeInterval(86_400))
        let second = await fixture.runReconciler([
            "run", "--now", nextNight, "--report-dir", fixture.reportDirectory, "--rate", "2000", "--concurrency", "32",
            "--max-attempts", "2",
        ])
        #expect(second.status == 0, "\(second)")
        let secondStats = try await fixture.simulatorStats()
        for path in ["/verifyReceipt", "/sandbox/verifyReceipt"] {
            for status in ["21002", "21003"] {
                #expect(
                    Self.appleStatusCount(secondStats, path: path, status: status)
                        == Self.appleStatusCount(firstStats, path: path, status: status),
                    "\(path) \(status)"
                )
            }
        }
        let runId = try #require(
            try conn.queryFirst("SELECT max(id) AS id FROM reconciliation_runs")?.decode("id", as: Int64?.self)
        )
        let selectedRefused = try conn.count(
            """
            SELECT count(*) AS n FROM reconciliation_items
             WHERE run_id = $1 AND original_transaction_id = ANY($2::text[])
            """,
            [runId, refused.map { Optional($0) }]
        )
        #expect(selectedRefused == 0)
        // Requests of the second night: only for the items it selected (one each, no retries needed here).
        let items = try conn.count("SELECT count(*) AS n FROM reconciliation_items WHERE run_id = $1", [runId])
        let secondRequests =
            (try #require(secondStats["requests_total"] as? Int)) - (try #require(firstStats["requests_total"] as? Int))
        #expect(secondRequests <= items * 2, "\(secondRequests) requests for \(items) items")

        // The report says how many were left out and when the next check is.
        let summary = try fixture.summary(runId: runId)
        let counts = try #require(summary["counts"] as? [String: Any])
        let notDue = try #require(counts["not_due_rejected"] as? Int)
        #expect(notDue >= refused.count)
        let nextCheck = try #require(counts["not_due_rejected_next_check"] as? String)
        #expect(nextCheck > nextNight)
    }
}
