import Foundation
import Logging
import Postgres
import TestSupport
import Testing

@testable import Reconciler

/// A report that cannot be written (docs/operations.md, "Reports that cannot be written"): found before the run is
/// created and before Apple is asked (exit 78), and when it still fails after the night's work, the run is recorded
/// failed in the database and in the metrics file instead of `completed` with exit 0.
@Suite struct ReportDestinationTests {
    /// A path under a regular file can be neither created nor written, whoever runs the test (root too).
    @Test(arguments: [
        ("--report-dir", "blocker/reports"),
        ("--metrics-file", "blocker/renewal-reconciler.prom"),
        ("--metrics-file", "a-directory"),
    ])
    func anUnwritableDestinationStopsTheRunBeforeAppleIsAsked(flag: String, relativePath: String) async throws {
        let fixture = try await EndToEndFixture(subscriptions: 40, seed: 3131)
        try await fixture.startSimulator()
        let blocker = fixture.directory.appendingPathComponent("blocker")
        try Data("not a folder".utf8).write(to: blocker)
        try FileManager.default.createDirectory(
            at: fixture.directory.appendingPathComponent("a-directory"),
            withIntermediateDirectories: true
        )
        let path = fixture.directory.appendingPathComponent(relativePath).path
        let outcome = await fixture.runReconciler(["run", "--now", fixture.now, flag, path, "--rate", "500"])
        #expect(outcome.status == 78, "\(outcome)")
        #expect(outcome.stderr.contains(flag) && outcome.stderr.contains(path), "\(outcome.stderr)")
        let conn = try fixture.connect()
        defer { conn.close() }
        #expect(try conn.count("SELECT count(*) AS n FROM reconciliation_runs") == 0, "a run was created")
        #expect(try await fixture.simulatorStats()["requests_total"] as? Int == 0, "Apple was asked")
    }

    /// What the failure's message promises: `run --resume` of the run recorded failed writes its report and asks
    /// Apple nothing (nothing is pending).
    @Test func aRunRecordedFailedForItsReportIsFinishedByResume() async throws {
        let fixture = try await EndToEndFixture(subscriptions: 40, seed: 3132)
        try await fixture.startSimulator()
        #expect(try await fixture.run(["--rate", "500"]).status == 0)
        let conn = try fixture.connect()
        defer { conn.close() }
        try conn.execute(
            "UPDATE reconciliation_runs SET status = 'failed', exit_code = 1, error = 'report' WHERE id = 1"
        )
        try FileManager.default.removeItem(atPath: fixture.reportDirectory)
        let asked = try #require(try await fixture.simulatorStats()["requests_total"] as? Int)
        let resumed = await fixture.runReconciler(["run", "--resume", "1", "--report-dir", fixture.reportDirectory])
        #expect(resumed.status == 0, "\(resumed)")
        #expect(try conn.count("SELECT count(*) AS n FROM reconciliation_runs WHERE status = 'completed'") == 1)
        let folders = try FileManager.default.contentsOfDirectory(atPath: fixture.reportDirectory)
        #expect(folders.contains { $0.hasSuffix("_run-1") }, "\(folders)")
        #expect(try await fixture.simulatorStats()["requests_total"] as? Int == asked)
    }

    @Test func aReportThatFailsAfterTheRunMarksTheRunFailedInTheDatabaseAndTheMetrics() throws {
        let (database, connection) = try ReportDatabaseTests.prepare()
        defer {
            connection.close()
            database.drop()
        }
        try withTemporaryDirectory { dir in
            let blocker = dir.appendingPathComponent("blocker")
            try Data("not a folder".utf8).write(to: blocker)
            let metrics = dir.appendingPathComponent("metrics.prom").path
            let writer = RunReportWriter(
                connectionString: database.url,
                logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
            )
            #expect(throws: RunReportFailedError.self) {
                try writer.write(
                    runId: 42,
                    reportDirectory: blocker.appendingPathComponent("reports").path,
                    metricsFile: metrics
                )
            }
            let row = try #require(
                try connection.queryFirst("SELECT status, exit_code, error FROM reconciliation_runs WHERE id = 42")
            )
            #expect(try row.decode("status", as: String.self) == "failed")
            #expect(try row.decode("exit_code", as: Int.self) == 1)
            #expect(try row.decode("error", as: String.self).contains("report could not be written"))
            let text = try String(contentsOfFile: metrics, encoding: .utf8)
            #expect(text.contains("renewal_reconciler_last_run_exit_code 1"), "\(text)")
            #expect(!text.contains("renewal_reconciler_last_run_exit_code 0"))
        }
    }
}
