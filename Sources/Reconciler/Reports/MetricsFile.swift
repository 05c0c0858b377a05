import Foundation

/// The `--metrics-file` output: Prometheus text exposition format for node_exporter's textfile
/// collector, describing the last run. Replaced atomically (temporary file in the same directory,
/// then rename) so the collector never reads half a file.
///
/// `renewal_reconciler_last_success_timestamp_seconds` is set only by a successful run; otherwise the
/// value from the previous file is carried over (alerting on "no success for 2 days" keeps working).
public enum MetricsFile {
    /// The metric that survives failed runs.
    public static let lastSuccessMetric = "renewal_reconciler_last_success_timestamp_seconds"

    /// The exposition text for `summary`. `previousLastSuccess` is the value to keep when the run did not succeed.
    public static func render(run: ReportRun, summary: RunSummary, previousLastSuccess: Double?) -> String {
        let finished = (run.finishedAt ?? run.startedAt).timeIntervalSince1970
        let lastSuccess = (run.succeeded ? finished : previousLastSuccess).map {
            Gauge(lastSuccessMetric, "Unix time the last successful run finished.", number($0))
        }
        let gauges =
            runGauges(summary, finished: finished) + appleGauges(summary.apple)
            + appGauges(summary.byApp ?? [], configured: run.configuredApps) + (lastSuccess.map { [$0] } ?? [])
        return gauges.map(\.text).joined()
    }

    /// One gauge of the file: its name, help text and samples (labels, then the value as written).
    struct Gauge {
        typealias Sample = (labels: [(String, String)], value: String)

        let name: String
        let help: String
        let samples: [Sample]

        init(_ name: String, _ help: String, _ samples: [Sample]) {
            self.name = name
            self.help = help
            self.samples = samples
        }

        /// A gauge of one sample without labels.
        init(_ name: String, _ help: String, _ value: String) {
            self.init(name, help, [([], value)])
        }

        /// A sample per key of `counts`, in key order, labelled `label`.
        init(_ name: String, _ help: String, label: String, _ counts: [String: Int]) {
            self.init(name, help, counts.sorted { $0.key < $1.key }.map { ([(label, $0.key)], "\($0.value)") })
        }

        /// The exposition text: `# HELP`, `# TYPE` and a line per sample.
        var text: String {
            var out = "# HELP \(name) \(help)\n# TYPE \(name) gauge\n"
            for sample in samples {
                let labels =
                    sample.labels.isEmpty
                    ? ""
                    : "{" + sample.labels.map { "\($0.0)=\"\(MetricsFile.escapeLabel($0.1))\"" }.joined(separator: ",")
                        + "}"
                out += "\(name)\(labels) \(sample.value)\n"
            }
            return out
        }
    }

    /// The run's own gauges: when it finished, its id, duration, exit code and items.
    private static func runGauges(_ summary: RunSummary, finished: Double) -> [Gauge] {
        let runLabels = [("mode", summary.mode), ("dry_run", summary.dryRun ? "true" : "false")]
        return [
            Gauge(
                "renewal_reconciler_last_run_timestamp_seconds",
                "Unix time the last run finished (started, if it did not finish).",
                [(runLabels, number(finished))]
            ),
            Gauge("renewal_reconciler_last_run_id", "Id of the last run (reconciliation_runs.id).", "\(summary.runId)"),
            Gauge(
                "renewal_reconciler_last_run_duration_seconds",
                "Wall time of the last run in seconds.",
                number(summary.durationSeconds ?? 0)
            ),
            Gauge(
                "renewal_reconciler_last_run_exit_code",
                "Exit code of the last run (0 success, 2 unresolved above threshold).",
                "\(summary.exitCode ?? 1)"
            ),
            Gauge("renewal_reconciler_last_run_due", "Subscriptions due in the last run.", "\(summary.counts.due)"),
            Gauge(
                "renewal_reconciler_last_run_items",
                "Items of the last run by outcome.",
                label: "outcome",
                summary.byOutcome
            ),
            Gauge(
                "renewal_reconciler_last_run_unresolved",
                "Items of the last run left unresolved.",
                "\(summary.counts.unresolved)"
            ),
        ]
    }

    /// The gauges of the run's requests to Apple.
    private static func appleGauges(_ apple: AppleRequestStats) -> [Gauge] {
        [
            Gauge(
                "renewal_reconciler_last_run_apple_requests",
                "verifyReceipt requests of the last run (retries included).",
                "\(apple.requests)"
            ),
            Gauge(
                "renewal_reconciler_last_run_apple_retries",
                "verifyReceipt retries of the last run.",
                "\(apple.retries)"
            ),
            Gauge(
                "renewal_reconciler_last_run_apple_responses_by_http_status",
                "verifyReceipt responses by HTTP status.",
                label: "code",
                apple.byHTTPStatus
            ),
            Gauge(
                "renewal_reconciler_last_run_apple_responses_by_status",
                "verifyReceipt responses by Apple status field.",
                label: "status",
                apple.byAppleStatus
            ),
            Gauge(
                "renewal_reconciler_last_run_apple_transport_errors",
                "verifyReceipt transport errors by kind.",
                label: "kind",
                apple.transportErrors
            ),
            Gauge(
                "renewal_reconciler_last_run_apple_request_rate",
                "Achieved verifyReceipt requests per second.",
                number(apple.achievedRate)
            ),
        ]
    }

    /// Per app (docs/reports.md, "Several apps"): each app has its own Apple rate limit to watch. None when the
    /// run counted no app.
    private static func appGauges(_ apps: [AppCounts], configured: [String]?) -> [Gauge] {
        guard !apps.isEmpty else { return [] }
        let sorted = seriesApps(apps, configured: configured)
        return [
            Gauge(
                "renewal_reconciler_last_run_app_items",
                "Items of the last run by app (bundle id) and outcome.",
                sorted.flatMap { app in
                    app.byOutcome.sorted { $0.key < $1.key }.map {
                        ([("app", app.id), ("outcome", $0.key)], "\($0.value)")
                    }
                }
            ),
            Gauge(
                "renewal_reconciler_last_run_app_apple_requests",
                "Apple requests of the last run by app (bundle id), retries included: each app's own rate limit spent.",
                sorted.map { ([("app", $0.id)], "\($0.requests)") }
            ),
        ]
    }

    /// The label for the rows of apps the run was not configured for: their series are summed under it, so the
    /// metrics file keeps a bounded number of series whatever bundle ids the table holds.
    static let otherApps = "(other)"

    /// The apps with a series of their own: those the run was configured for (any case), and rows without a bundle
    /// id; every other app is summed into `(other)`. A run that named no app lists the apps whose items were not
    /// all `no_app`. Sorted by id, `(other)` last.
    static func seriesApps(_ apps: [AppCounts], configured: [String]?) -> [AppCounts] {
        let known = configured.map { Set($0.map { $0.lowercased() }) }
        func listed(_ app: AppCounts) -> Bool {
            if let known { return known.contains(app.id.lowercased()) || app.id == ReportOutcome.unknown }
            return app.byOutcome.keys.contains { $0 != ItemOutcome.noApp.rawValue }
        }
        var other = AppCounts(id: otherApps, selected: 0, requests: 0, byOutcome: [:], byNewState: [:])
        var series: [AppCounts] = []
        for app in apps {
            guard !listed(app) else {
                series.append(app)
                continue
            }
            other.selected += app.selected
            other.requests += app.requests
            other.byOutcome.merge(app.byOutcome, uniquingKeysWith: +)
            other.byNewState.merge(app.byNewState, uniquingKeysWith: +)
        }
        series.sort { $0.id < $1.id }
        if other.selected > 0 || !other.byOutcome.isEmpty { series.append(other) }
        return series
    }

    /// Writes the metrics of `summary` to `path` atomically, carrying over the last success time from
    /// the existing file when this run did not succeed.
    /// - Throws: `ReportError` naming the path when the directory is not writable or full.
    public static func write(run: ReportRun, summary: RunSummary, to path: String) throws(ReportError) {
        let previous = run.succeeded ? nil : previousLastSuccess(path: path)
        let text = render(run: run, summary: summary, previousLastSuccess: previous)
        let directory = (path as NSString).deletingLastPathComponent
        let temporary =
            (directory.isEmpty ? "." : directory) + "/.\((path as NSString).lastPathComponent).tmp-"
            + AtomicFiles.uniqueSuffix()
        try AtomicFiles.writeNewFile(temporary, Data(text.utf8))
        do throws(ReportError) {
            try AtomicFiles.rename(temporary, path)
        } catch {
            unlink(temporary)
            throw error
        }
    }

    /// The metrics of `data`'s run written to `path` (the convenience the pipeline and CLI call).
    public static func write(data: ReportData, to path: String) throws(ReportError) {
        try write(run: data.run, summary: RunSummary(data: data), to: path)
    }

    /// The last-success value of an existing metrics file, if it has a valid one.
    public static func previousLastSuccess(path: String) -> Double? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(lastSuccessMetric + " ") {
            let value = line.dropFirst(lastSuccessMetric.count + 1).trimmingCharacters(in: .whitespaces)
            if let number = Double(value), number.isFinite, number >= 0 { return number }
        }
        return nil
    }

    /// Escapes a label value: backslash, double quote and newline.
    public static func escapeLabel(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    static func number(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(format: "%.3f", value)
    }
}
