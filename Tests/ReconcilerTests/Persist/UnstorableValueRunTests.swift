import Foundation
import Postgres
import Reconciler
import ReconcilerDemo
import Testing

/// The built binaries against the simulator, with one row the database refuses to store (a rule of the
/// app's schema the reconciler knows nothing about): the run completes with that item rejected and every
/// other row written, the next run is not blocked by it, and a killed run resumes past it.
@Suite struct UnstorableValueRunTests {
    @Test func aRowTheDatabaseRefusesNeitherFailsTheRunNorBlocksTheNextOneOrAResume() async throws {
        let world = try await EndToEndFixture(subscriptions: 60, seed: 17)
        try await world.startSimulator()
        let conn = try world.connect()
        defer { conn.close() }
        let ordinary = try world.truthRecords().filter {
            ($0["apple_status"] as? NSNumber)?.intValue == 0 && $0["bundle_id"] as? String == EndToEndFixture.bundleId
                && $0["environment"] as? String == "Production"
        }.compactMap { $0["original_transaction_id"] as? String }
        let target = try #require(
            try conn.queryFirst(
                """
                SELECT id, original_transaction_id FROM subscriptions WHERE original_transaction_id = ANY($1::text[])
                 ORDER BY id DESC LIMIT 1
                """,
                [ordinary.map { Optional($0) }]
            )
        )
        let targetId: Int64 = try target.decode("id")
        let targetOtid: String = try target.decode("original_transaction_id")
        try conn.execute(
            """
            ALTER TABLE subscription_checks ADD CONSTRAINT never_verify_target
                CHECK (subscription_id <> \(targetId) OR last_verified_at IS NULL)
            """
        )

        // 1. The run completes; the refused row's item is rejected naming what PostgreSQL refused.
        let first = try await world.run()
        #expect(first.status == 0, "\(first)")
        #expect(first.stderr.contains("written item by item"), "\(first.stderr.suffix(2000))")
        let item = try #require(
            try conn.queryFirst(
                "SELECT status, outcome, reason FROM reconciliation_items WHERE run_id = 1 AND subscription_id = $1",
                [targetId]
            )
        )
        #expect(try item.decode("outcome", as: String?.self) == "rejected")
        let reason = try item.decode("reason", as: String?.self) ?? ""
        #expect(reason.hasPrefix("implausible_value: "), "\(reason)")
        #expect(reason.contains("never_verify_target") && reason.contains("23514"), "\(reason)")
        let row = try #require(
            try conn.queryFirst(
                "SELECT version, state, last_verified_at FROM subscriptions LEFT JOIN subscription_checks ON subscription_id = id WHERE id = $1",
                [targetId]
            )
        )
        #expect(try row.decode("version", as: Int64.self) == 1)
        #expect(try row.decode("last_verified_at", as: Date?.self) == nil)
        #expect(try conn.count("SELECT count(*) AS n FROM reconciliation_runs WHERE status = 'completed'") == 1)
        // Every other row is exactly what Apple says.
        try EndToEndFixture.writeComparableTruth(from: world.truthFile, to: world.comparableTruthFile)
        let others = world.directory.appendingPathComponent("truth-others.jsonl")
        try String(contentsOfFile: world.comparableTruthFile, encoding: .utf8).split(separator: "\n")
            .filter { !$0.contains("\"\(targetOtid)\"") }.joined(separator: "\n")
            .write(to: others, atomically: true, encoding: .utf8)
        let comparison = try TruthComparison(connection: conn, bundleId: EndToEndFixture.bundleId)
            .compare(truthFile: others.path)
        #expect(comparison.compared == (try world.comparableTruthCount()) - 1)
        #expect(comparison.matched == comparison.compared, "\(comparison.mismatches.prefix(5))")
        #expect(try world.accountNotFoundProblems().problems.isEmpty)
        let errorsCSV = try #require(world.reportFolders().first).appendingPathComponent("errors.csv")
        let errors = try String(contentsOf: errorsCSV, encoding: .utf8)
        #expect(errors.contains(targetOtid) && errors.contains("implausible_value"))

        // 2. The next night selects the row again (never verified) and is not blocked by it.
        let second = try await world.run()
        #expect(second.status == 0, "\(second)")
        #expect(try Self.runStatus(conn, 2) == "completed")
        #expect(try Self.itemOutcome(conn, run: 2, targetId) == "rejected")

        // 3. A run killed after its first batch resumes to the end, the refused row rejected again.
        let killed = await world.runReconciler(
            [
                "backfill", "--all", "--now", world.now, "--rate", "2000", "--concurrency", "4", "--batch-size", "5",
                "--report-dir", world.reportDirectory,
            ],
            extraEnvironment: ["RENEWAL_RECONCILER_CRASH_AT": "batch-committed:1"]
        )
        #expect(killed.killedBySIGKILL, "\(killed)")
        #expect(try Self.itemOutcome(conn, run: 3, targetId) == "pending")
        let resumed = try await world.run(["--resume"])
        #expect(resumed.status == 0, "\(resumed)")
        #expect(try Self.runStatus(conn, 3) == "completed")
        #expect(
            try conn.count("SELECT count(*) AS n FROM reconciliation_items WHERE run_id = 3 AND status <> 'done'") == 0
        )
        #expect(try Self.itemOutcome(conn, run: 3, targetId) == "rejected")
    }

    static func runStatus(_ conn: PostgresConnection, _ runId: Int64) throws -> String? {
        try conn.queryFirst("SELECT status FROM reconciliation_runs WHERE id = $1", [runId])?.decode("status")
    }

    /// The item's outcome, or `pending` while it has none.
    static func itemOutcome(_ conn: PostgresConnection, run runId: Int64, _ subscriptionId: Int64) throws -> String? {
        try conn.queryFirst(
            """
            SELECT COALESCE(outcome, status) AS o FROM reconciliation_items WHERE run_id = $1 AND subscription_id = $2
            """,
            [runId, subscriptionId]
        )?.decode("o")
    }
}
