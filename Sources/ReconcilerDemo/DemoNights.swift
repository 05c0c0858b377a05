import CivilTime
import Foundation
import Logging
import Reconciler

/// The demo's later nights (`demo --nights N`, docs/reports.md "Trends across nights"): the same world (the
/// simulator's seed and `--anchor`) with its clock one day later each night. Before night k the simulator is
/// restarted on a free port with `--now` = the first night's as-of + k days, then a full nightly run
/// (`ReconciliationRunner`, the first night's request with that as-of and the new port) writes its report folder
/// and refreshes
/// trends.csv and trends.html in the report directory. The simulator stays an independent witness: only its clock
/// moves, through its own command line.
public struct DemoNights {
    /// What one night did.
    public struct Night: Sendable {
        public var index: Int
        public var asOf: Date
        public var runId: Int64
        public var status: RunStatus
        public var done: Int
        public var due: Int
        public var reportPath: String?

        public init(index: Int, summary: ReconciliationRunner.Summary) {
            self.index = index
            asOf = summary.asOf
            runId = summary.runId
            status = summary.status
            done = summary.done
            due = summary.due
            reportPath = summary.reportPath
        }

        /// `night 3: as of 2026-11-24T03:00:00Z, run 4 completed, 41/41 verified`
        public var line: String {
            "night \(index): as of \(RFC3339.string(asOf)), run \(runId) \(status.rawValue), \(done)/\(due) verified"
        }
    }

    public let connectionString: String
    public let logger: Logger
    public let simulatorBinary: String
    /// The first night's `serve` arguments; any `--now` and `--anchor` are replaced night by night.
    public let simulatorArguments: [String]
    public let sharedSecret: String
    /// The first night's as-of: the anchor of the world, and the start of the nights.
    public let start: Date

    public init(
        connectionString: String,
        logger: Logger,
        simulatorBinary: String,
        simulatorArguments: [String],
        sharedSecret: String,
        start: Date
    ) {
        self.connectionString = connectionString
        self.logger = logger
        self.simulatorBinary = simulatorBinary
        self.simulatorArguments = simulatorArguments
        self.sharedSecret = sharedSecret
        self.start = start
    }

    /// The as-of of night `index` (0 is the first night).
    public func asOf(night index: Int) -> Date {
        start.addingTimeInterval(Double(index) * 86_400)
    }

    /// The simulator's `serve` arguments for night `index`: the same world, its clock at that night.
    public func arguments(night index: Int) -> [String] {
        var kept: [String] = []
        var skipNext = false
        for argument in simulatorArguments {
            if skipNext {
                skipNext = false
            } else if argument == "--now" || argument == "--anchor" {
                skipNext = true
            } else {
                kept.append(argument)
            }
        }
        return kept + ["--anchor", RFC3339.string(start), "--now", RFC3339.string(asOf(night: index))]
    }

    /// Runs nights 1 through `count - 1` after the first (`running`, the simulator serving night 0, which is
    /// stopped): each restarts the simulator with its clock, on a port of its own (the one just freed may be another
    /// process's by then), and runs `request` at its as-of against it. `report(night)` is called after each night.
    /// Returns the nights run, the first not included.
    public func runLaterNights(
        count: Int,
        request: ReconciliationRunner.Request,
        running: SimulatorProcess,
        report: (Night) -> Void
    ) throws -> [Night] {
        let firstBase = running.baseURL
        running.stop()
        var nights: [Night] = []
        for index in 1..<max(1, count) {
            let simulator = try SimulatorProcess(
                binary: simulatorBinary,
                arguments: arguments(night: index),
                sharedSecret: sharedSecret
            )
            defer { simulator.stop() }
            var tonight = request
            tonight.apps = request.apps.map { $0.movingSimulatorBase(from: firstBase, to: simulator.baseURL) }
            tonight.now = asOf(night: index)
            let summary = try ReconciliationRunner(connectionString: connectionString, logger: logger).run(tonight)
            let night = Night(index: index, summary: summary)
            report(night)
            nights.append(night)
        }
        return nights
    }
}
