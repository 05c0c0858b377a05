import Foundation
import TestSupport
import Testing

/// `demo --tie-out` (docs/tie-out.md, "The demo"), the built binary against the simulator and a real database: a
/// fiscal month of nights, Apple's reports downloaded through the App Store Connect API, the tie-out written, and
/// every check against the simulator's sales truth holding (lost orders found, nothing else unexplained, family
/// sharing and tax where the world put them).
@Suite struct DemoTieOutTests {
    @Test func aFiscalMonthTiesOutWithEveryDifferenceWhereTheSimulatorPutIt() async throws {
        let bin = BuiltBinary.directory
        let reconciler = bin.appendingPathComponent("renewal-reconciler").path
        try #require(FileManager.default.isExecutableFile(atPath: reconciler), "build first: \(reconciler)")
        let db = try TestDatabase.make()
        defer { db.drop() }
        try await withTemporaryDirectoryAsync { dir in
            let reports = dir.appendingPathComponent("reports").path
            let demo = try await DemoNightsTests.run(
                reconciler,
                [
                    "demo", "--tie-out", "--subscriptions", "800", "--seed", "31", "--rate", "3000", "--now",
                    "2026-11-28T23:00:00Z", "--report-dir", reports, "--simulator", BuiltBinary.simulator,
                    "--request-timeout", "600",
                ],
                environment: ["DATABASE_URL": db.url]
            )
            #expect(demo.status == 0, "demo output: \(demo.output.suffix(4000))")
            // Fiscal October 2026: 27 September to 31 October, 40 nights from 26 September.
            #expect(demo.output.contains("tie-out 2026-10 (fiscal month, 2026-09-27 to 2026-10-31)"))
            #expect(demo.output.contains("night 39: as of 2026-11-04T23:00:00Z"))
            #expect(
                demo.output.contains("tie-out vs the simulator's truth: 9/9 checks hold"),
                "\(demo.output.suffix(3000))"
            )
            // At least 3 lost customers, and at least one of their sales in the month, found.
            let lost = try #require(demo.output.firstMatch(of: /lost orders listed \(Apple only\): expected (\d+)/))
            #expect((Int(lost.1) ?? 0) > 0)
            let folder = reports + "/tieout_2026-10"
            for name in ["tieout.html", "tieout.csv", "tieout.json"] {
                #expect(FileManager.default.fileExists(atPath: folder + "/" + name), "\(name)")
            }
            let html = try String(contentsOfFile: folder + "/tieout.html", encoding: .utf8)
            #expect(html.contains("<svg"))
            #expect(!html.lowercased().contains("<script"))
        }
    }
}
