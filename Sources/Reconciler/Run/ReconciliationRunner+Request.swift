import Foundation

extension ReconciliationRunner {
    /// What to run.
    public struct Request: Sendable {
        public var mode: Mode
        public var selection: Selection
        public var options: RunOptions
        /// The apps the run reconciles, each with its credentials and rate (docs/architecture.md, "Several apps"):
        /// those of `--apps FILE`, or the one app of the environment and flags. Never empty.
        public var apps: [AppDefinition]
        /// `--apps FILE`, when the apps came from one (stored with the run: `--resume` needs the same file).
        public var appsFile: String?
        /// How far back the first read of notification history looks (`--notifications-lookback`).
        public var notificationsLookback: TimeInterval = 7 * 86_400
        /// `--now`: fixes "as of" (and the decision clock) for tests and reproductions.
        public var now: Date?
        /// `--resume [RUN_ID]`: `.some(nil)` resumes the latest interrupted run.
        public var resume: Int64?? = nil
        public var progressStyle: ProgressReporter.Style = .quiet
        /// Where the run's report folder goes (`--report-dir`), nil for none.
        public var reportDirectory: String?
        /// `--metrics-file`: Prometheus text for node_exporter, written with the report.
        public var metricsFile: String?
        /// `--ca-file` / `APPLE_CA_FILE`: the CA certificates HTTPS connections to Apple must chain to, instead
        /// of the system's (checked by `HTTPSCAFileConfiguration`); nil for the system's trust store.
        public var caFile: String?
        /// How the report estimates proceeds (`--small-business`, `--commission-rate`).
        public var moneyOptions = ReportMoneyOptions()
        /// `run --worker`: join the running worker run (or start it) and share its items with the other workers
        /// (docs/architecture.md, "Workers"); nil for a one-process run.
        public var worker: WorkerSettings?

        /// The rest (`appsFile`, `now`, `resume`, the report's destinations, ...) is set on the request as needed.
        public init(mode: Mode, selection: Selection, options: RunOptions, apps: [AppDefinition]) {
            (self.mode, self.selection, self.options, self.apps) = (mode, selection, options, apps)
        }

        /// The source of a one-app run (stored with it, so `--resume` asks the same way); `.auto` for a run of the
        /// apps of a file, whose sources are stored per app.
        var source: AppleSourceKind {
            appsFile == nil && apps.count == 1 ? apps[0].source : .auto
        }
    }
}
