import CivilTime
import Foundation
import Postgres
import Reconciler
import ReconcilerDemo
import TestSupport
import Testing

/// Bad input: stored rows that are broken after import (an empty receipt, invalid base64, a
/// 300,000-character non-receipt, another app's receipt, a receipt that does not contain the row's
/// `original_transaction_id`) each end as a named rejection in the run (its item's outcome and reason,
/// and errors.csv), keep their stored entitlement untouched, and affect no other row: every other row
/// matches the simulator's truth.
@Suite struct BadInputRunTests {
    static let asOf = "2026-11-21T03:00:00Z"
    static let bundleId = "com.example.renewals"

    /// One tampered row: how it was broken and the reason code the run must give it.
    struct Tampering {
        var label: String
        var id: String
        var receipt: String
        var expectedReasons: Set<String>
        var expectedVerifyStatus: String
    }

    @Test func tamperedRowsAreRejectedByNameAndEveryOtherRowMatchesTheTruth() async throws {
        let bin = BuiltBinary.directory
        let simulator = bin.appendingPathComponent("appstore-simulator").path
        try #require(FileManager.default.isExecutableFile(atPath: simulator), "build first: \(simulator)")
        let db = try TestDatabase.make()
        defer { db.drop() }
        let secret = "badinput-\(UUID().uuidString)"
        let seed = 11
        let population = 120

        try await withTemporaryDirectoryAsync { dir in
            let export = dir.appendingPathComponent("export")
            try await SimulatorProcess.exported(
                binary: simulator,
                seed: UInt64(seed),
                subscriptions: population,
                now: try #require(RFC3339.parse(Self.asOf)),
                into: export.path
            )
            let truthLines = try String(contentsOf: export.appendingPathComponent("truth.jsonl"), encoding: .utf8)
                .split(separator: "\n").map(String.init)
            let truths = try truthLines.map {
                try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
            }
            var receipts: [String: String] = [:]
            for line in try String(contentsOf: export.appendingPathComponent("purchases.jsonl"), encoding: .utf8)
                .split(separator: "\n")
            {
                let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                receipts[try #require(object["original_transaction_id"] as? String)] =
                    object["latest_receipt"] as? String
            }

            // Victims: ordinary production rows Apple would answer with status 0 for this app.
            let ordinary = truths.filter {
                ($0["apple_status"] as? NSNumber)?.intValue == 0 && $0["bundle_id"] as? String == Self.bundleId
                    && $0["environment"] as? String == "Production"
                    && ["silent_renewal", "active_not_renewed", "billing_retry", "expired_long_ago"]
                        .contains($0["scenario"] as? String ?? "")
            }.compactMap { $0["original_transaction_id"] as? String }
            try #require(ordinary.count >= 6, "population too small: \(ordinary.count) ordinary rows")
            let foreignDonor = try #require(
                truths.first { $0["scenario"] as? String == "foreign_app" }?["original_transaction_id"] as? String
            )
            let otherFamilyDonor = ordinary[5]
            let tamperings = [
                Tampering(
                    label: "empty receipt",
                    id: ordinary[0],
                    receipt: "",
                    expectedReasons: ["receipt_malformed_or_temporary", "invalid_receipt"],
                    expectedVerifyStatus: "invalid_receipt"
                ),
                Tampering(
                    label: "invalid base64",
                    id: ordinary[1],
                    receipt: "@@@not base64@@@",
                    expectedReasons: ["invalid_receipt"],
                    expectedVerifyStatus: "invalid_receipt"
                ),
                Tampering(
                    label: "300,000-character non-receipt",
                    id: ordinary[2],
                    receipt: String(repeating: "QUJD", count: 75_000),
                    expectedReasons: ["invalid_receipt"],
                    expectedVerifyStatus: "invalid_receipt"
                ),
                Tampering(
                    label: "another app's receipt",
                    id: ordinary[3],
                    receipt: try #require(receipts[foreignDonor]),
                    expectedReasons: ["bundle_mismatch"],
                    expectedVerifyStatus: "rejected"
                ),
                Tampering(
                    label: "receipt without the row's id",
                    id: ordinary[4],
                    receipt: try #require(receipts[otherFamilyDonor]),
                    expectedReasons: ["subscription_not_in_receipt"],
                    expectedVerifyStatus: "rejected"
                ),
            ]
            let tamperedIds = Set(tamperings.map(\.id))

            let sim = try await SimulatorProcess.started(
                binary: simulator,
                arguments: ["--seed", String(seed), "--subscriptions", String(population), "--now", Self.asOf],
                sharedSecret: secret
            )
            defer { sim.signal(SIGKILL) }
            let env = [
                "DATABASE_URL": db.url, "APPLE_SHARED_SECRET": secret, "APPLE_BUNDLE_ID": Self.bundleId,
                "APPLE_VERIFY_URL": sim.productionURL, "APPLE_SANDBOX_VERIFY_URL": sim.sandboxURL,
            ]
            let run = { (args: [String]) in try await BadInputConfigurationTests.runReconciler(args, environment: env) }
            let sql = BadInputConfigurationTests.packageRoot.appendingPathComponent("sql").path
            let migrated = try await run(["migrate", "--sql-dir", sql])
            try #require(migrated.status == 0, "\(migrated.stderr)")
            let imported = try await run(["import", "--file", export.appendingPathComponent("purchases.jsonl").path])
            try #require(imported.status == 0, "\(imported.stderr)")

            // Tamper with the stored rows, remembering what they held.
            let conn = try db.connect()
            defer { conn.close() }
            var before: [String: (expires: Date?, product: String)] = [:]
            for t in tamperings {
                let row = try #require(
                    try conn.queryFirst(
                        "SELECT expires_at, product_id FROM subscriptions WHERE original_transaction_id = $1",
                        [t.id]
                    )
                )
                before[t.id] = (
                    try row.decode("expires_at", as: Date?.self), try row.decode("product_id", as: String.self)
                )
                let updated = try conn.query(
                    "UPDATE subscriptions SET latest_receipt = $1 WHERE original_transaction_id = $2 RETURNING id",
                    [t.receipt, t.id]
                )
                try #require(updated.count == 1, "\(t.label)")
            }

            let reports = dir.appendingPathComponent("reports")
            let result = try await run([
                "run", "--now", Self.asOf, "--rate", "2000", "--max-attempts", "2", "--report-dir", reports.path,
            ])
            #expect(result.status == 0, "run: \(result.stderr.suffix(2000))")
            #expect(!result.stderr.contains(secret))

            // Each tampered row: a named rejection in the run's items, its bookkeeping, nothing extended.
            let runId = try #require(
                try conn.queryFirst("SELECT max(id) AS id FROM reconciliation_runs")
            ).decode("id", as: Int64.self)
            for t in tamperings {
                let item = try #require(
                    try conn.queryFirst(
                        "SELECT outcome, reason, status FROM reconciliation_items WHERE run_id = $1 AND original_transaction_id = $2",
                        [runId, t.id]
                    ),
                    "\(t.label): no item"
                )
                let outcome: String? = try item.decode("outcome")
                let reason: String = try item.decode("reason", as: String?.self) ?? ""
                #expect(outcome == "rejected", "\(t.label): outcome \(outcome ?? "nil")")
                #expect(try item.decode("status", as: String.self) == "done", "\(t.label)")
                let code = String(reason.prefix { $0 != ":" })
                #expect(t.expectedReasons.contains(code), "\(t.label): reason \(reason)")
                #expect(
                    !reason.contains(String(t.receipt.prefix(40))) || t.receipt.count < 40,
                    "\(t.label): receipt echoed"
                )

                let row = try #require(
                    try conn.queryFirst(
                        """
                        SELECT state, expires_at, product_id, latest_receipt, last_verify_status
                          FROM subscriptions LEFT JOIN subscription_checks ON subscription_id = id WHERE original_transaction_id = $1
                        """,
                        [t.id]
                    )
                )
                #expect(try row.decode("state", as: String?.self) == nil, "\(t.label): state changed")
                #expect(
                    try row.decode("expires_at", as: Date?.self) == before[t.id]?.expires,
                    "\(t.label): expiry moved"
                )
                #expect(try row.decode("product_id", as: String.self) == before[t.id]?.product, "\(t.label)")
                #expect(try row.decode("latest_receipt", as: String.self) == t.receipt, "\(t.label): receipt replaced")
                #expect(
                    try row.decode("last_verify_status", as: String?.self) == t.expectedVerifyStatus,
                    "\(t.label)"
                )
            }

            // errors.csv lists each of them with its reason.
            let errorsCSV = try #require(Self.find("errors.csv", under: reports), "no errors.csv")
            // RFC 4180 rows end in CRLF (one Character in Swift: split on newlines, not on "\n").
            let errorRows = try String(contentsOf: errorsCSV, encoding: .utf8).split(whereSeparator: \.isNewline)
                .map(String.init)
            for t in tamperings {
                let row = errorRows.first { $0.hasPrefix(t.id + ",") }
                #expect(row != nil, "\(t.label): not in errors.csv")
                if let row {
                    #expect(row.contains(",rejected,"), "\(t.label): \(row)")
                    #expect(t.expectedReasons.contains { row.contains($0) }, "\(t.label): \(row)")
                }
            }
            #expect(errorRows.count >= tamperings.count + 1)
            #expect(errorRows.allSatisfy { $0.count < 2000 }, "a receipt is echoed into errors.csv")

            // Every other row matches the truth (the donors included); 21010 rows ended their entitlement
            // (checked apart from the truth file, see EndToEndFixture.scenariosCheckedSeparately).
            let untampered = dir.appendingPathComponent("truth-untampered.jsonl")
            let deletedIds = truths.filter { $0["scenario"] as? String == "deleted_account" }
                .compactMap { $0["original_transaction_id"] as? String }
            try truthLines.filter { line in
                !(tamperedIds.union(deletedIds)).contains { line.contains("\"\($0)\"") }
            }
            .joined(separator: "\n").write(to: untampered, atomically: true, encoding: .utf8)
            let comparison = try TruthComparison(connection: conn, bundleId: Self.bundleId).compare(
                truthFile: untampered.path
            )
            #expect(comparison.compared == population - tamperings.count - deletedIds.count)
            #expect(try EndToEndFixture.accountNotFoundProblems(conn, ids: deletedIds, asOf: Self.asOf).isEmpty)
            #expect(comparison.missing == 0)
            #expect(comparison.mismatchCount == 0, "\(comparison.mismatches.prefix(10))")
            #expect(comparison.matched == comparison.compared)
        }
    }

    static func find(_ name: String, under directory: URL) -> URL? {
        let enumerator = FileManager.default.enumerator(atPath: directory.path)
        while let path = enumerator?.nextObject() as? String {
            if (path as NSString).lastPathComponent == name { return directory.appendingPathComponent(path) }
        }
        return nil
    }
}
