import Foundation
import Reconciler
import Testing

@Suite struct ReportMetricsTests {
    @Test func rendersHelpTypeAndSamples() {
        let data = ReportSampleData.data()
        let text = MetricsFile.render(run: data.run, summary: RunSummary(data: data), previousLastSuccess: nil)
        #expect(text.contains("# HELP renewal_reconciler_last_run_timestamp_seconds "))
        #expect(text.contains("# TYPE renewal_reconciler_last_run_timestamp_seconds gauge"))
        #expect(
            text.contains(
                "renewal_reconciler_last_run_timestamp_seconds{mode=\"nightly\",dry_run=\"false\"} 1714522020"
            )
        )
        #expect(text.contains("renewal_reconciler_last_run_duration_seconds 300\n"))
        #expect(text.contains("renewal_reconciler_last_run_items{outcome=\"lapsed\"} 2\n"))
        #expect(text.contains("renewal_reconciler_last_run_apple_responses_by_status{status=\"21002\"} 2\n"))
        #expect(text.contains("renewal_reconciler_last_run_apple_responses_by_http_status{code=\"503\"} 1\n"))
        #expect(text.contains("renewal_reconciler_last_run_unresolved 1\n"))
        #expect(text.contains("renewal_reconciler_last_run_exit_code 0\n"))
        #expect(text.contains("renewal_reconciler_last_success_timestamp_seconds 1714522020\n"))
        // Every sample line belongs to a metric declared with HELP and TYPE.
        let declared = Set(
            text.split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }.map { $0.split(separator: " ")[2] }
        )
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let name = line.prefix { $0 != "{" && $0 != " " }
            #expect(declared.contains(name), "undeclared metric in \(line)")
        }
    }

    @Test func eachAppHasItsItemsAndRequests() {
        let data = ReportSampleData.data()
        var summary = RunSummary(data: data)
        summary.byApp = [
            AppCounts(id: "com.example.two", selected: 3, requests: 7, byOutcome: ["renewed": 3], byNewState: [:]),
            AppCounts(
                id: "com.example.one",
                selected: 5,
                requests: 0,
                byOutcome: ["no_app": 4, "unchanged": 1],
                byNewState: [:]
            ),
        ]
        let text = MetricsFile.render(run: data.run, summary: summary, previousLastSuccess: nil)
        #expect(text.contains("# TYPE renewal_reconciler_last_run_app_items gauge\n"))
        #expect(
            text.contains(
                """
                renewal_reconciler_last_run_app_items{app="com.example.one",outcome="no_app"} 4
                renewal_reconciler_last_run_app_items{app="com.example.one",outcome="unchanged"} 1
                renewal_reconciler_last_run_app_items{app="com.example.two",outcome="renewed"} 3

                """
            )
        )
        #expect(text.contains("renewal_reconciler_last_run_app_apple_requests{app=\"com.example.two\"} 7\n"))
        #expect(text.contains("renewal_reconciler_last_run_app_apple_requests{app=\"com.example.one\"} 0\n"))
        summary.byApp = nil
        let single = MetricsFile.render(run: data.run, summary: summary, previousLastSuccess: nil)
        #expect(!single.contains("renewal_reconciler_last_run_app_"))
    }

    /// 2,000 bundle ids in the table that no app of the run is configured for: one `(other)` series sums them, so
    /// the file's size does not grow with junk in the table.
    @Test func appsTheRunWasNotConfiguredForShareOneSeries() {
        let data = ReportSampleData.data()
        var summary = RunSummary(data: data)
        let junk = (0..<2000).map {
            AppCounts(id: "junk.\($0)", selected: 1, requests: 0, byOutcome: ["no_app": 1], byNewState: [:])
        }
        summary.byApp =
            junk + [
                AppCounts(id: "com.example.two", selected: 3, requests: 7, byOutcome: ["renewed": 3], byNewState: [:]),
                AppCounts(
                    id: "com.example.one",
                    selected: 2,
                    requests: 2,
                    byOutcome: ["unchanged": 2],
                    byNewState: [:]
                ),
            ]
        var run = data.run
        run.configuredApps = ["com.example.ONE", "com.example.two"]
        let text = MetricsFile.render(run: run, summary: summary, previousLastSuccess: nil)
        let appLines = text.split(separator: "\n").filter { $0.hasPrefix("renewal_reconciler_last_run_app_") }
        #expect(appLines.count == 6, "\(appLines)")
        #expect(text.contains("renewal_reconciler_last_run_app_items{app=\"(other)\",outcome=\"no_app\"} 2000\n"))
        #expect(
            text.contains("renewal_reconciler_last_run_app_items{app=\"com.example.one\",outcome=\"unchanged\"} 2\n")
        )
        #expect(text.contains("renewal_reconciler_last_run_app_apple_requests{app=\"(other)\"} 0\n"))
        #expect(!text.contains("junk."))
        // A run that named no app: the apps whose items were not all no_app keep their series.
        run.configuredApps = nil
        let unnamed = MetricsFile.render(run: run, summary: summary, previousLastSuccess: nil)
        #expect(unnamed.contains("renewal_reconciler_last_run_app_apple_requests{app=\"com.example.two\"} 7\n"))
        #expect(!unnamed.contains("junk."))
    }

    @Test func labelValuesAreEscaped() {
        #expect(MetricsFile.escapeLabel("a\"b\\c\nd") == "a\\\"b\\\\c\\nd")
    }

    @Test func failedRunKeepsThePreviousLastSuccess() throws {
        let directory = try ReportTempDirectory()
        let path = directory.path + "/renewal.prom"
        let good = ReportSampleData.data()
        try MetricsFile.write(data: good, to: path)
        #expect(MetricsFile.previousLastSuccess(path: path) == 1_714_522_020)

        var failed = ReportSampleData.data(runId: 43, status: "failed", exitCode: 1)
        failed.run.startedAt = failed.run.startedAt.addingTimeInterval(86_400)
        failed.run.finishedAt = failed.run.finishedAt?.addingTimeInterval(86_400)
        try MetricsFile.write(data: failed, to: path)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.contains("renewal_reconciler_last_run_exit_code 1\n"))
        #expect(text.contains("renewal_reconciler_last_run_id 43\n"))
        #expect(text.contains("renewal_reconciler_last_success_timestamp_seconds 1714522020\n"))
        // No temporary file left behind.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["renewal.prom"])
    }

    @Test func failedFirstRunHasNoLastSuccess() throws {
        let data = ReportSampleData.data(status: "failed", exitCode: 1)
        let text = MetricsFile.render(run: data.run, summary: RunSummary(data: data), previousLastSuccess: nil)
        #expect(!text.contains(MetricsFile.lastSuccessMetric))
    }

    @Test func unwritableDirectoryNamesThePath() throws {
        let error = #expect(throws: ReportError.self) {
            try MetricsFile.write(data: ReportSampleData.data(), to: "/proc/renewal-reconciler-test/metrics.prom")
        }
        #expect(error?.description.contains("/proc/renewal-reconciler-test") == true)
    }
}
