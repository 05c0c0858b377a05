import CivilTime
import Foundation
import Postgres
import Reconciler
import ReconcilerDemo
import TestSupport
import Testing

/// The verifyReceipt demo (the built binaries, a real database, the simulator over loopback) prices what it reads
/// with the catalog the simulator exports, and its catalog money per currency equals the simulator's truth for the
/// period to the minor unit where verifyReceipt can know it (docs/reports.md, "Money from the catalog"). The same
/// world is exported again here, so the comparison reads the simulator's own files.
@Suite struct CatalogMoneyDemoTests {
    static let seed: UInt64 = 2026
    static let subscriptions = 500
    static let now = "2026-11-21T23:30:00Z"

    @Test func verifyReceiptDemoCatalogMoneyEqualsTheSimulatorsTruth() async throws {
        let bin = BuiltBinary.directory
        let reconciler = bin.appendingPathComponent("renewal-reconciler").path
        let simulator = bin.appendingPathComponent("appstore-simulator").path
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
                    "demo", "--subscriptions", String(Self.subscriptions), "--seed", String(Self.seed), "--rate",
                    "3000", "--now", Self.now, "--report-dir", reports, "--simulator", simulator,
                    "--request-timeout", "600",
                ],
                environment: env
            )
            let stdout = demo.stdout
            #expect(demo.status == 0, "demo output: \(stdout)")
            #expect(stdout.contains("[catalog (products table)]"), "demo output: \(stdout)")
            #expect(!stdout.contains("DIFFERS"), "demo output: \(stdout)")

            let export = dir.appendingPathComponent("export").path
            try await SimulatorProcess.exported(
                binary: simulator,
                seed: Self.seed,
                subscriptions: Self.subscriptions,
                now: try #require(RFC3339.parse(Self.now)),
                into: export
            )
            let conn = try db.connect()
            defer { conn.close() }
            let runId = try #require(
                try conn.queryFirst("SELECT max(id) AS id FROM reconciliation_runs")?.decode("id", as: Int64.self)
            )
            let report = try CatalogComparison(connection: conn).compare(
                runId: runId,
                exportDirectory: export + "/server-api"
            )
            #expect(report.matches, "\(report.lines())")
            let currencies = report.currencies.values
            // Something to compare: paid purchases, comparable full refunds, and refunds kept apart.
            #expect(currencies.contains { $0.expected.purchases > 0 }, "\(report.lines())")
            #expect(currencies.contains { $0.expected.refunds > 0 }, "\(report.lines())")
            #expect(currencies.contains { $0.prorated.count > 0 }, "\(report.lines())")
            for c in currencies {
                #expect(c.expected == c.found, "\(c.code): \(report.lines())")
                #expect(c.revenuePeriod == c.ledgerPeriod, "\(c.code): \(report.lines())")
            }

            // summary.json carries the same figures under money.catalog_by_currency, labelled with their source.
            let folder = try #require(
                try FileManager.default.contentsOfDirectory(atPath: reports).first { $0.hasSuffix("_run-\(runId)") }
            )
            let data = try Data(contentsOf: URL(fileURLWithPath: reports + "/" + folder + "/summary.json"))
            let summary = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            let money = try #require(summary["money"] as? [String: Any])
            let catalog = try #require(money["catalog_by_currency"] as? [String: [String: Any]])
            #expect(!catalog.isEmpty)
            for (code, figures) in catalog {
                #expect(figures["source"] as? String == "catalog (products table)")
                let c = try #require(report.currencies[code])
                #expect((figures["gross_milliunits"] as? NSNumber)?.int64Value == c.found.gross, "\(code)")
                #expect((figures["paid_transactions"] as? NSNumber)?.intValue == c.found.purchases, "\(code)")
            }

            // A catalog price that differs from what Apple charged makes the comparison fail.
            let priced = try #require(currencies.first { $0.expected.purchases > 0 })
            _ = try conn.execute(
                "UPDATE products SET price = price + 1, intro_price = intro_price + 1 WHERE currency = $1",
                [priced.code]
            )
            let changed = try CatalogComparison(connection: conn).compare(
                runId: runId,
                exportDirectory: export + "/server-api"
            )
            #expect(!changed.matches)
            #expect(changed.currencies[priced.code]?.found.gross != changed.currencies[priced.code]?.expected.gross)
        }
    }
}
