import Foundation
import Postgres
import Reconciler
import TestSupport
import Testing

/// After a real demo run (the built binary, the simulator, a real database), every
/// report file exists with the documented columns, and the counts in summary.json equal the counts in the
/// database and in the CSVs. The expected column lists are written out here on purpose (the documented
/// contract), not read from the code under test.
@Suite struct DemoReportTests {
    static let packageRoot = EndToEndFixture.packageRoot

    static let documentedColumns: [String: [String]] = [
        "changes.csv": [
            "original_transaction_id", "user_id", "product_id", "previous_state", "new_state", "previous_expires_at",
            "new_expires_at", "outcome", "auto_renew", "auto_renew_product_id", "environment", "apple_status",
            "expiry_moved_backwards", "reason",
        ],
        "transactions.csv": [
            "transaction_id", "original_transaction_id", "product_id", "purchase_date", "expires_date", "kind",
            "is_trial", "is_intro_offer", "offer", "cancellation_date", "cancellation_reason", "purchase_counted_in",
            "refund_counted_in",
        ],
        "errors.csv": [
            "original_transaction_id", "user_id", "product_id", "outcome", "apple_status", "attempts", "reason",
        ],
    ]

    @Test func demoReportCountsEqualDatabaseAndCSVs() async throws {
        let bin = BuiltBinary.directory
        let reconciler = bin.appendingPathComponent("renewal-reconciler").path
        try #require(FileManager.default.isExecutableFile(atPath: reconciler), "build first: \(reconciler)")
        let db = try TestDatabase.make()
        try await withTemporaryDirectoryAsync { dir in
            let reports = dir.appendingPathComponent("reports").path
            var env = ProcessInfo.processInfo.environment
            env["DATABASE_URL"] = db.url
            // The request timeout is a safety net only (docs/testing.md, "One command").
            let demo = try await ChildProcess.run(
                reconciler,
                [
                    "demo", "--subscriptions", "1500", "--seed", "31", "--rate", "3000", "--now",
                    "2026-11-21T03:00:00Z", "--report-dir", reports, "--simulator",
                    bin.appendingPathComponent("appstore-simulator").path, "--request-timeout", "600",
                ],
                environment: env
            )
            let stdout = demo.stdout
            #expect(demo.status == 0, "demo output: \(stdout)")
            #expect(stdout.contains("1500/1500 (100.00%)"), "demo output: \(stdout)")

            let folders = try FileManager.default.contentsOfDirectory(atPath: reports).filter { $0.contains("_run-") }
            let folderName = try #require(folders.first)
            #expect(folders.count == 1)
            let folder = reports + "/" + folderName
            for file in ["summary.json", "changes.csv", "transactions.csv", "errors.csv", "report.html"] {
                #expect(FileManager.default.fileExists(atPath: folder + "/" + file), "\(file) missing")
            }
            var rows: [String: [[String]]] = [:]
            for (file, columns) in Self.documentedColumns {
                let records = try Self.csvRecords(String(contentsOfFile: folder + "/" + file, encoding: .utf8))
                #expect(records.first == columns, "\(file) header")
                rows[file] = Array(records.dropFirst())
            }

            let summaryData = try Data(contentsOf: URL(fileURLWithPath: folder + "/summary.json"))
            let summary = try #require(try JSONSerialization.jsonObject(with: summaryData) as? [String: Any])
            let runId = try #require((summary["run_id"] as? NSNumber)?.int64Value)
            #expect(folderName.hasSuffix("_run-\(runId)"))
            let counts = try #require(summary["counts"] as? [String: Any])
            let byOutcome = try #require(summary["by_outcome"] as? [String: Any])
            let transactions = try #require(summary["transactions"] as? [String: Any])

            let conn = try db.connect()
            defer { conn.close() }
            func count(_ sql: String) throws -> Int {
                try conn.queryFirst(sql, [runId])?.decode("n", as: Int.self) ?? -1
            }
            // By outcome: summary == database.
            var total = 0
            for outcome in [
                "renewed", "unchanged", "lapsed", "recovered", "revoked", "changed", "rejected", "unresolved",
                "conflict",
            ] {
                let db = try count(
                    "SELECT count(*) AS n FROM reconciliation_items WHERE run_id = $1 AND outcome = '\(outcome)'"
                )
                #expect((byOutcome[outcome] as? NSNumber)?.intValue == db, "by_outcome.\(outcome)")
                total += db
            }
            // Every subscription but the mid-period ones (verified last night, expiry months away: verifyReceipt
            // cannot know they changed, and the truth says not_due) is due and done.
            let notDue = try count(
                """
                SELECT count(*) AS n FROM subscriptions s WHERE NOT EXISTS
                       (SELECT 1 FROM reconciliation_items i WHERE i.run_id = $1 AND i.subscription_id = s.id)
                """
            )
            #expect(notDue > 0 && notDue < 60, "\(notDue) not due")
            #expect(total == 1500 - notDue)
            #expect((counts["done"] as? NSNumber)?.intValue == 1500 - notDue)
            #expect(
                (counts["due"] as? NSNumber)?.intValue
                    == (try count("SELECT due_count AS n FROM reconciliation_runs WHERE id = $1"))
            )
            // errors.csv == summary == database.
            let errors = try count(
                "SELECT count(*) AS n FROM reconciliation_items WHERE run_id = $1 AND outcome IN ('unresolved','rejected','conflict')"
            )
            #expect(errors > 0, "the population has rejected receipts")
            #expect(rows["errors.csv"]?.count == errors)
            #expect((counts["errors"] as? NSNumber)?.intValue == errors)
            // changes.csv == summary == database (state, expiry, product or auto-renew changed).
            let changes = try count(
                """
                SELECT count(*) AS n FROM reconciliation_items WHERE run_id = $1 AND status = 'done'
                   AND outcome NOT IN ('unresolved','rejected','conflict')
                   AND (previous_state IS DISTINCT FROM new_state OR previous_expires_at IS DISTINCT FROM new_expires_at
                        OR previous_product_id IS DISTINCT FROM product_id OR previous_auto_renew IS DISTINCT FROM auto_renew)
                """
            )
            #expect(changes > 0)
            #expect(rows["changes.csv"]?.count == changes)
            #expect((counts["changed"] as? NSNumber)?.intValue == changes)
            // transactions.csv == summary == ledger rows first seen (or refunded) in this run.
            let ledger = try count(
                "SELECT count(*) AS n FROM subscription_transactions WHERE first_seen_run_id = $1 OR refund_seen_run_id = $1"
            )
            #expect(ledger > 1500)
            #expect(rows["transactions.csv"]?.count == ledger)
            #expect((transactions["total"] as? NSNumber)?.intValue == ledger)
            // The changes rows name real items of this run.
            let sampleIds = Set((rows["changes.csv"] ?? []).prefix(50).map { $0[0] })
            let known = try conn.query(
                "SELECT original_transaction_id FROM reconciliation_items WHERE run_id = $1 AND original_transaction_id = ANY($2::text[])",
                [runId, Array(sampleIds).map { Optional($0) }]
            )
            #expect(known.count == sampleIds.count)
            // Rows Apple answered 21010: entitlement ended (state expired, auto-renew off, expiry not after as-of).
            let ended = try conn.query(
                """
                SELECT original_transaction_id, state, auto_renew, expires_at <= '2026-11-21T03:00:00Z' AS ended
                  FROM subscriptions LEFT JOIN subscription_checks ON subscription_id = id WHERE last_apple_status = 21010
                """
            )
            #expect(!ended.isEmpty, "the population has deleted accounts")
            for row in ended {
                #expect(try row.decode("state", as: String?.self) == "expired")
                #expect(try row.decode("auto_renew", as: Bool?.self) == false)
                #expect(try row.decode("ended", as: Bool?.self) == true)
            }
        }
    }

    /// RFC 4180 records (quoted fields may hold commas, quotes and line breaks).
    static func csvRecords(_ text: String) throws -> [[String]] {
        var records: [[String]] = []
        var field = ""
        var record: [String] = []
        var quoted = false
        var chars = Array(text.unicodeScalars)[...]
        while let c = chars.popFirst() {
            if quoted {
                if c == "\"" {
                    if chars.first == "\"" {
                        field.unicodeScalars.append("\"")
                        chars.removeFirst()
                    } else {
                        quoted = false
                    }
                } else {
                    field.unicodeScalars.append(c)
                }
            } else if c == "\"" {
                quoted = true
            } else if c == "," {
                record.append(field)
                field = ""
            } else if c == "\r" {
                continue
            } else if c == "\n" {
                record.append(field)
                field = ""
                records.append(record)
                record = []
            } else {
                field.unicodeScalars.append(c)
            }
        }
        if !field.isEmpty || !record.isEmpty {
            record.append(field)
            records.append(record)
        }
        return records
    }
}
