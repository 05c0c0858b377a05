import Foundation
import Postgres
import Reconciler
import ReconcilerDemo
import TestSupport
import Testing

/// `demo --nights 14` (the built binary, the simulator restarted with its clock one day later each night, a real
/// database): a report folder per night, and trends.csv with one row per day, app, product and currency whose active,
/// grace-period and billing-retry counts, churn and (App Store Server API) MRR equal the simulator's own recomputation
/// of what Apple implies on each night (`appstore-simulator export --trend-nights`, run here apart from the demo:
/// docs/simulator.md, "Trends truth"; docs/reports.md, "Trends across nights").
@Suite struct DemoNightsTests {
    static let start = "2026-11-21T03:00:00Z"
    static let nights = 14
    static let subscriptions = 300
    static let seed = "47"

    @Test(arguments: ["server-api", "verify-receipt"])
    func fourteenNightsOfTrendsEqualTheSimulatorsTruth(source: String) async throws {
        let bin = BuiltBinary.directory
        let reconciler = bin.appendingPathComponent("renewal-reconciler").path
        try #require(FileManager.default.isExecutableFile(atPath: reconciler), "build first: \(reconciler)")
        let db = try TestDatabase.make()
        try await withTemporaryDirectoryAsync { dir in
            let reports = dir.appendingPathComponent("reports").path
            // The request timeout is a safety net only (docs/testing.md, "One command").
            let demo = try await Self.run(
                reconciler,
                [
                    "demo", "--nights", String(Self.nights), "--subscriptions", String(Self.subscriptions), "--seed",
                    Self.seed, "--rate", "3000", "--now", Self.start, "--report-dir", reports, "--source", source,
                    "--simulator", BuiltBinary.simulator, "--request-timeout", "600",
                ],
                environment: ["DATABASE_URL": db.url]
            )
            #expect(demo.status == 0, "demo output: \(demo.output)")
            for night in 0..<Self.nights {
                #expect(demo.output.contains("night \(night): as of "), "demo output: \(demo.output)")
            }

            // A report folder per night, named by its day.
            let days = (0..<Self.nights).map { Self.day(after: $0) }
            let folders = try FileManager.default.contentsOfDirectory(atPath: reports).filter { $0.contains("_run-") }
            #expect(Set(folders.map { String($0.prefix(10)) }) == Set(days))
            #expect(folders.count == Self.nights)

            // The independent witness: the same world (seed, anchor = the first night), its own recomputation.
            let truthDirectory = dir.appendingPathComponent("truth").path
            let export = try await Self.run(
                BuiltBinary.simulator,
                [
                    "export", "--seed", Self.seed, "--subscriptions", String(Self.subscriptions), "--now", Self.start,
                    "--trend-nights", String(Self.nights), "--out", truthDirectory,
                ]
            )
            #expect(export.status == 0, "export: \(export.output)")
            let truthFile = truthDirectory + "/trend-truth.jsonl"
            let view = source == "server-api" ? "server_api" : "verify_receipt"
            let truth = try Self.truthRows(truthFile).filter { $0["view"] as? String == view }

            // trends.csv: 14 days, each with rows; for the Server API the same (product, currency) rows as the truth.
            let csv = try String(contentsOfFile: reports + "/trends.csv", encoding: .utf8)
            let records = csv.split(separator: "\r\n").map {
                $0.split(separator: ",", omittingEmptySubsequences: false)
            }
            let header = try #require(records.first).map(String.init)
            let date = try #require(header.firstIndex(of: "date"))
            let product = try #require(header.firstIndex(of: "product_id"))
            let currency = try #require(header.firstIndex(of: "currency"))
            let rows = records.dropFirst()
            #expect(Set(rows.map { String($0[date]) }) == Set(days))
            for day in days {
                let keys = Set(rows.filter { $0[date] == day }.map { "\($0[product]) \($0[currency])" })
                #expect(!keys.isEmpty, "no trends.csv row on \(day)")
                if source == "server-api" {
                    let expected = Set(
                        truth.filter { $0["date"] as? String == day }.map {
                            "\($0["product_id"] as? String ?? "") \($0["currency"] as? String ?? "")"
                        }
                    )
                    #expect(keys == expected, "rows of \(day)")
                }
            }

            // The figures, day by day, equal the truth's.
            var comparison = TrendTruthComparison(serverAPI: source == "server-api")
            let conn = try PostgresConnection(db.url)
            defer { conn.close() }
            comparison.firstNightExtras = try TrendTruthComparison.firstNightSweep(
                connection: conn,
                runId: 1,
                truthFile: truthDirectory + "/truth.jsonl"
            )
            let report = try comparison.compare(trendsFile: reports + "/trends.csv", truthFile: truthFile)
            #expect(report.days == days)
            #expect(report.matches, "\(report.lines(limit: 30).joined(separator: "\n"))")
            #expect(report.figuresCompared >= report.rowsCompared * 4)

            // Not vacuous: the world moved (churn, grace and billing retry on some nights), and was priced.
            func total(_ column: String) -> Int64 {
                truth.reduce(0) { $0 + ((($1[column]) as? NSNumber)?.int64Value ?? 0) }
            }
            #expect(total("churned") > 0)
            #expect(total("grace_period") > 0)
            #expect(total("billing_retry") > 0)
            #expect(total("active") > 0)
            if source == "server-api" {
                #expect(total("mrr") > 0)
                // Recurring subscriptions are valued at the price Apple's renewal info says they renew at (a row's
                // subscriptions without auto-renew, at 0, name the ledger as their source).
                let counted = try #require(header.firstIndex(of: "mrr_subscriptions"))
                let mrrSource = try #require(header.firstIndex(of: "mrr_source"))
                let priced = rows.filter { (Int($0[counted]) ?? 0) > 0 }
                #expect(!priced.isEmpty)
                #expect(priced.allSatisfy { $0[mrrSource].hasPrefix("renewal") }, "\(priced.map { $0[mrrSource] })")
            }
            #expect(Set(truth.compactMap { $0["date"] as? String }) == Set(days))
        }
    }

    /// `YYYY-MM-DD` of the first night plus `nights` days.
    static func day(after nights: Int) -> String {
        let first = ISO8601DateFormatter().date(from: start) ?? .distantPast
        return String(ISO8601DateFormatter().string(from: first.addingTimeInterval(Double(nights) * 86_400)).prefix(10))
    }

    static func truthRows(_ path: String) throws -> [[String: Any]] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return try data.split(separator: UInt8(ascii: "\n")).map {
            try #require(try JSONSerialization.jsonObject(with: Data($0)) as? [String: Any])
        }
    }

    /// Runs `binary` with `arguments`; standard output and error together.
    static func run(
        _ binary: String,
        _ arguments: [String],
        environment: [String: String] = [:]
    ) async throws -> (
        status: Int32, output: String
    ) {
        let outcome = try await ChildProcess.run(
            binary,
            arguments,
            environment: ProcessInfo.processInfo.environment.merging(environment) { $1 }
        )
        return (outcome.status, outcome.stdout + outcome.stderr)
    }
}
