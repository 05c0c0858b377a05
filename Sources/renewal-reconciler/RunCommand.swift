import ArgumentParser
import Foundation
import Logging
import Reconciler

struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "The nightly run: re-verify every subscription that is due.",
        discussion: """
            Due: never verified; or not revoked, expires_at within the next --lookahead (default 24h: renewals \
            happen in the last day, so checking then catches them before entitlement lapses) or in the past up \
            to --lookback (default 62d: Apple keeps retrying failed billing for up to 60 days, so a lapsed \
            subscription can still recover that long, and two more nights check it once after Apple gave up, \
            when its billing retry ends as expired), and not verified in the last --min-recheck (default 20h: \
            one check a night, even if a run is repeated); or revoked (refunded) and either changed by the app \
            since it was last verified or last verified more than --recheck-revoked ago (default 7d: a customer \
            can buy again after a refund). A subscription whose last verification was a rejection (Apple refused \
            the receipt: 21003, 21004, 21002 through the whole retry budget, another app's receipt, a signed \
            answer that does not verify, ...) is asked again on a widening schedule instead of every night: after \
            its n-th rejection in a row it rests for the n-th step of --recheck-rejected beyond --min-recheck \
            (default 1d,2d,4d,8d,16d,30d, the last step repeats), and at once when the app changed the row. \
            Unresolved items (transient failures) stay due every night; backfill always asks.

            The sweep: verifyReceipt sends no notifications, so a refund or an auto-renew change in the middle \
            of a long (yearly) period would wait for the expiry window. Each run therefore also re-verifies about \
            1/--sweep-days (default 30) of the other verified, non-revoked subscriptions, least recently verified \
            first, so every subscription is verified at least once in that many nights; 0 turns it off. The \
            report shows the sweep apart from the due window.

            The run takes an advisory lock (a second concurrent run exits 75 naming the first), records itself \
            in reconciliation_runs, and commits every result with the row changes it causes. A run that was \
            killed is marked interrupted by the next run, which says so; `run --resume [RUN_ID]` finishes it \
            exactly as planned (same selection, same as-of time), skipping finished items.

            \(ReconcilerExitCode.helpText)
            """
    )

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var pipeline: PipelineOptions
    @OptionGroup var money: MoneyReportOptions
    @OptionGroup var logging: LoggingOptions

    @Option(
        help: ArgumentHelp(
            "Select subscriptions expiring within this much time from now (e.g. 24h, 2d).",
            valueName: "duration"
        )
    )
    var lookahead: DurationArgument = DurationArgument(argument: "24h")!

    @Option(help: ArgumentHelp("...and those that expired up to this long ago (e.g. 62d).", valueName: "duration"))
    var lookback: DurationArgument = DurationArgument(argument: "62d")!

    @Option(
        help: ArgumentHelp(
            "Skip subscriptions verified less than this long ago (e.g. 20h; 0 to recheck all).",
            valueName: "duration"
        )
    )
    var minRecheck: DurationArgument = DurationArgument(argument: "20h")!

    @Option(
        help: ArgumentHelp(
            "Verify revoked subscriptions again once their last verification is this old (e.g. 7d, 36h); "
                + "sooner when the app changed the row.",
            valueName: "duration"
        )
    )
    var recheckRevoked: DurationArgument = DurationArgument(argument: "7d")!

    @Option(
        help: ArgumentHelp(
            "How long a rejected subscription rests before it is asked again, beyond --min-recheck, after its "
                + "1st, 2nd, ... rejection in a row (comma-separated durations; the last one repeats); sooner "
                + "when the app changed the row.",
            valueName: "list"
        )
    )
    var recheckRejected: DurationListArgument = DurationListArgument(argument: "1d,2d,4d,8d,16d,30d")!

    @Option(
        help: ArgumentHelp(
            "Also re-verify about 1/N of the verified, non-revoked subscriptions outside the due window each "
                + "night, least recently verified first, so each is seen within N nights (0: no sweep).",
            valueName: "N"
        )
    )
    var sweepDays: Int = Int(Selection.defaultSweepDays)

    @Flag(help: "Resume an interrupted run instead of starting a new one (the latest, or RUN_ID).")
    var resume = false

    @Flag(
        help: ArgumentHelp(
            "Join the running worker run, or start it: several workers (on one host or many) share its items "
                + "through PostgreSQL, each app's rate limit divided among them; the last one writes the reports "
                + "(docs/architecture.md, \"Workers\")."
        )
    )
    var worker = false

    @Option(
        help: ArgumentHelp(
            "With --worker: how often a worker renews its registration and leases and re-reads its share.",
            valueName: "duration"
        )
    )
    var heartbeat: DurationArgument = DurationArgument(argument: "5s")!

    @Option(
        help: ArgumentHelp(
            "With --worker: a worker silent this long is dead; its items go to the others (at least 3 heartbeats).",
            valueName: "duration"
        )
    )
    var leaseTimeout: DurationArgument = DurationArgument(argument: "30s")!

    @Option(
        help: ArgumentHelp(
            "With --worker: when no worker run is running, start one only if none whose as-of time (its start, or "
                + "its --now) lies within this long has completed (a host whose timer fired late finds the night's "
                + "run done: exit 0); 0: always.",
            valueName: "duration"
        )
    )
    var joinWindow: DurationArgument = DurationArgument(argument: "12h")!

    @Argument(help: ArgumentHelp("With --resume: the run to resume.", valueName: "run-id"))
    var runId: Int64?

    func validate() throws {
        if runId != nil && !resume { throw ValidationError("a RUN_ID is only accepted with --resume") }
        if worker && resume {
            throw ValidationError(
                "--worker joins the running worker run by itself; it cannot be combined with --resume"
            )
        }
        try validateBounds()
    }

    /// Every numeric flag of `run` within its bound (`SettingBounds`, docs/operations.md, "Bounds of every numeric
    /// setting"); the worker flags too without `--worker`, so a typo is caught before it matters.
    private func validateBounds() throws {
        for (flag, value) in [
            ("--lookahead", lookahead), ("--lookback", lookback), ("--min-recheck", minRecheck),
            ("--recheck-revoked", recheckRevoked),
        ] {
            try SettingBounds.selectionWindow.validate(value, flag: flag)
        }
        for seconds in recheckRejected.seconds where !SettingBounds.recheckRejectedStep.contains(seconds) {
            throw ValidationError(
                "--recheck-rejected: each step must be \(SettingBounds.recheckRejectedStep.rangeText), got "
                    + "\(NumericBound.durationText(seconds)) in \(recheckRejected.text.prefix(60))"
            )
        }
        try SettingBounds.sweepDays.validate(sweepDays, flag: "--sweep-days")
        try SettingBounds.heartbeat.validate(heartbeat, flag: "--heartbeat")
        try SettingBounds.leaseTimeout.validate(leaseTimeout, flag: "--lease-timeout")
        if let problem = SettingBounds.leaseProblem(
            leaseSeconds: leaseTimeout.seconds,
            heartbeatSeconds: heartbeat.seconds
        ) {
            throw ValidationError(problem)
        }
        try SettingBounds.joinWindow.validate(joinWindow, flag: "--join-window")
    }

    func run() throws {
        logging.bootstrap()
        try runReportingErrors {
            let resumed =
                resume
                ? try ReconciliationRunner.storedSource(
                    connectionString: try database.connectionString(),
                    resume: runId
                ) : nil
            let apps = try pipeline.runApps(resumed: resumed)
            var request = ReconciliationRunner.Request(
                mode: .nightly,
                selection: .due(
                    lookaheadSeconds: lookahead.seconds,
                    lookbackSeconds: lookback.seconds,
                    minRecheckSeconds: minRecheck.seconds,
                    recheckRevokedSeconds: recheckRevoked.seconds,
                    recheckRejectedSeconds: recheckRejected.seconds,
                    sweepDays: Double(sweepDays)
                ),
                options: pipeline.runOptions(),
                apps: apps.apps
            )
            request.appsFile = apps.file
            request.resume = resume ? .some(runId) : nil
            request.progressStyle = ProgressReporter.style(forTerminalOr: .quiet)
            if worker {
                request.worker = WorkerSettings(
                    heartbeatSeconds: heartbeat.seconds,
                    leaseSeconds: leaseTimeout.seconds,
                    joinWindowSeconds: joinWindow.seconds
                )
            }
            try executeRun(request, database: database, pipeline: pipeline, money: money)
        }
    }
}

/// Runs a request, writes its reports and metrics, prints the one-line result, exits with its code.
func executeRun(
    _ request: ReconciliationRunner.Request,
    database: DatabaseOptions,
    pipeline: PipelineOptions,
    money: MoneyReportOptions
) throws {
    let url = try database.connectionString()
    let logger = Logger(label: "renewal-reconciler")
    var request = request
    request.notificationsLookback = pipeline.notificationsLookback.seconds
    request.now = pipeline.asOf
    // Checked before anything is asked of Apple: a missing or unusable CA file is exit 78.
    request.caFile = try HTTPSCAFileConfiguration.load(flag: pipeline.caFile)
    request.reportDirectory = pipeline.reportDir
    request.metricsFile = pipeline.metricsFile
    request.moneyOptions = try money.moneyOptions()
    let summary = try ReconciliationRunner(connectionString: url, logger: logger).run(request)
    if summary.exitCode != .success { throw ExitCode(summary.exitCode.rawValue) }
}
