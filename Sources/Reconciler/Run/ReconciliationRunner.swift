import AppStoreClient
import CivilTime
import CurlHTTP
import Dispatch
import Foundation
import Logging
import Postgres
import ReceiptDomain

/// One run of the reconciler from start to end: take the lock, create (or resume) the run row, scan the
/// selection into items, process them through the pipeline, finish the run row, and say how it ended.
///
/// Crash safety: every item result is committed with the row changes it causes; the run row tracks the
/// scan cursor, a heartbeat and counts. A run whose process died is found `running` by the next run
/// (which holds the lock, so the other cannot be alive) and marked `interrupted`; `--resume` finishes it.
public final class ReconciliationRunner: @unchecked Sendable {
    /// The advisory lock key all runs take (session level, released when the connection closes).
    public static let lockKey: Int64 = 0x5245_4E45_5741_4C53  // "RENEWALS"

    public enum Mode: String, Sendable, Codable {
        case nightly, backfill, demo
    }

    /// What to run.
    public struct Request: Sendable {
        public var mode: Mode
        public var selection: Selection
        public var options: RunOptions
        /// verifyReceipt's settings (nil when the run uses the App Store Server API only).
        public var apple: AppleConfiguration?
        /// The App Store Server API's settings, when a key is configured.
        public var serverAPI: ServerAPISettings?
        /// `.serverAPI` or `.verifyReceipt` (resolved from `--source`).
        public var source: AppleSourceKind
        /// How far back the first read of notification history looks (`--notifications-lookback`).
        public var notificationsLookback: TimeInterval
        /// `--now`: fixes "as of" (and the decision clock) for tests and reproductions.
        public var now: Date?
        /// `--resume [RUN_ID]`: `.some(nil)` resumes the latest interrupted run.
        public var resume: Int64??
        public var progressStyle: ProgressReporter.Style
        /// Where the run's report folder goes (`--report-dir`), nil for none.
        public var reportDirectory: String?
        /// `--metrics-file`: Prometheus text for node_exporter, written with the report.
        public var metricsFile: String?
        /// `--ca-file` / `APPLE_CA_FILE`: the CA certificates HTTPS connections to Apple must chain to, instead
        /// of the system's (checked by `HTTPSCAFileConfiguration`); nil for the system's trust store.
        public var caFile: String?
        /// How the report estimates proceeds (`--small-business`, `--commission-rate`).
        public var moneyOptions = ReportMoneyOptions()
        /// `--apps FILE`: the apps a run over several apps reconciles, each with its own credentials and rate
        /// (docs/architecture.md, "Several apps"); empty: the one app of `apple` / `serverAPI`.
        public var apps: [AppDefinition] = []
        /// `run --worker`: join the running worker run (or start it) and share its items with the other workers
        /// (docs/architecture.md, "Workers"); nil for a one-process run.
        public var worker: WorkerSettings?

        public init(
            mode: Mode,
            selection: Selection,
            options: RunOptions,
            apple: AppleConfiguration?,
            serverAPI: ServerAPISettings? = nil,
            source: AppleSourceKind = .verifyReceipt,
            notificationsLookback: TimeInterval = 7 * 86_400,
            now: Date? = nil,
            resume: Int64?? = nil,
            progressStyle: ProgressReporter.Style = .quiet,
            reportDirectory: String? = nil,
            metricsFile: String? = nil,
            caFile: String? = nil
        ) {
            self.mode = mode
            self.selection = selection
            self.options = options
            self.apple = apple
            self.serverAPI = serverAPI
            self.source = source
            self.notificationsLookback = notificationsLookback
            self.now = now
            self.resume = resume
            self.progressStyle = progressStyle
            self.reportDirectory = reportDirectory
            self.metricsFile = metricsFile
            self.caFile = caFile
        }
    }

    /// How the run ended.
    public struct Summary: Sendable {
        public var runId: Int64
        public var status: RunStatus
        public var exitCode: ReconcilerExitCode
        public var dryRun: Bool
        public var asOf: Date
        public var due: Int
        public var done: Int
        public var pending: Int
        public var outcomes: [String: Int]
        public var stats: AppleRequestStats
        public var message: String?
        /// The report folder written for this run, when one was asked for.
        public var reportPath: String?
    }

    let connectionString: String
    let logger: Logger

    public init(connectionString: String, logger: Logger) {
        self.connectionString = connectionString
        self.logger = logger
    }

    /// Runs to the end (or until SIGINT/SIGTERM), then writes the report folder and metrics file when asked;
    /// blocks the calling thread. Their folders are checked writable first (`ReportDestinationCheck`, exit 78 before
    /// the run is created); a report that still cannot be written marks the run failed and throws (`ReportError`,
    /// naming the path) after the run's data is safely stored.
    public func run(_ request: Request) throws -> Summary {
        // A report that cannot be written is found before the night's work, not after it.
        try ReportDestinationCheck.check(reportDirectory: request.reportDirectory, metricsFile: request.metricsFile)
        var summary: Summary
        var writesReports = true
        if let worker = request.worker {
            // Only the worker that completes the run writes its reports (once).
            (summary, writesReports) = try runWorker(request, worker)
        } else {
            summary = try runToEnd(request)
        }
        if writesReports, request.reportDirectory != nil || request.metricsFile != nil {
            summary.reportPath = try RunReportWriter(
                connectionString: connectionString,
                logger: logger,
                moneyOptions: request.moneyOptions
            ).write(
                runId: summary.runId,
                reportDirectory: request.reportDirectory,
                metricsFile: request.metricsFile
            )
        }
        return summary
    }

    private func runToEnd(_ request: Request) throws -> Summary {
        let control = try PostgresConnection(connectionString)
        defer { control.close() }
        try SchemaRequirement.check(control)
        guard try control.tryAdvisoryLock(key: Self.lockKey) else { throw try lockedError(control) }
        try markDeadRunsInterrupted(control)

        let prepared = try prepareRun(request, control)
        let (runId, parameters, asOf) = (prepared.id, prepared.parameters, prepared.asOf)
        let ownership = try RunRecords(connection: control).ownership(runId: runId)
        let runLogger: Logger = {
            var l = logger
            l[metadataKey: "run"] = "\(runId)"
            return l
        }()

        do {
            // The run lock confirmed every half second and the heartbeat every 10 s, on the control connection's
            // own queue; the pipeline sends only while the lock is confirmed (docs/architecture.md, "The run lock").
            let controlQueue = DispatchQueue(label: "renewal-reconciler.control")
            let lockWatch = RunLockWatch(connection: control, queue: controlQueue) { why in runLogger.error("\(why)") }
            lockWatch.start()
            defer { lockWatch.cancel() }
            let heartbeat = DispatchSource.makeTimerSource(queue: controlQueue)
            heartbeat.schedule(deadline: .now() + .seconds(10), repeating: .seconds(10))
            heartbeat.setEventHandler {
                guard !lockWatch.isLost else { return }
                do {
                    try lockWatch.withConnection { try RunRecords(connection: $0).heartbeat(runId: runId) }
                } catch let error as PostgresError where error.code == .advisoryLockLost {
                    // The watch has logged it and the pipeline stops at its next send window.
                } catch {
                    runLogger.warning("heartbeat failed (will retry): \(error)")
                }
            }
            heartbeat.resume()
            defer { heartbeat.cancel() }

            // Scan (resumes from the stored cursor).
            let work = try PostgresConnection(connectionString)
            defer { work.close() }
            // Notification history first: what Apple told us since the last run makes those subscriptions
            // due whatever their expiry (docs/architecture.md, "Notification history").
            let notificationFailure = try pullNotifications(
                request,
                parameters: parameters,
                runId: runId,
                asOf: asOf,
                connection: work,
                logger: runLogger
            )
            let scanner = RunScanner(connection: work, runId: runId, asOf: asOf)
            let due = try scanner.scan(parameters.selection)
            let alreadyDone =
                try work.queryFirst(
                    "SELECT count(*) AS n FROM reconciliation_items WHERE run_id = $1 AND status = 'done'",
                    [runId]
                )?
                .decode("n", as: Int.self) ?? 0
            runLogger.info(
                "run \(runId): \(due) subscriptions selected\(alreadyDone > 0 ? ", \(alreadyDone) already done" : "")"
            )

            // Apple client and pipeline.
            let http = Self.httpClient(parameters: parameters, request: request)
            defer { http.shutdown() }
            let reader = try PostgresConnection(connectionString)
            defer { reader.close() }
            let source = parameters.source ?? .verifyReceipt
            let store = Self.store(
                runId: runId,
                parameters: parameters,
                asOf: asOf,
                request: request,
                connection: work,
                readConnection: reader
            )
            store.ownerResumeCount = ownership.resumeCount
            store.statsTarget = .run(base: ownership.statsBase)
            let reporter = ProgressReporter(style: request.progressStyle, total: due, alreadyDone: alreadyDone)
            let fixedNow: Date? = parameters.fixedClock ? asOf : nil
            let appleSource = try makeRouter(
                source,
                request: request,
                parameters: parameters,
                http: http,
                logger: runLogger,
                now: { fixedNow ?? Date() }
            )
            let pipeline = try ReconciliationPipeline(
                store: store,
                source: appleSource,
                options: parameters.options,
                logger: runLogger,
                sendGate: lockWatch,
                progress: { written, unresolved, _ in reporter.update(written: written, unresolved: unresolved) }
            )

            let signals = SignalTrap { signal in
                runLogger.warning(
                    "received \(signal): finishing requests in flight, then stopping (resume with `run --resume \(runId)`)"
                )
                pipeline.requestStop(.interrupted(signal))
            }
            defer { signals.cancel() }

            reporter.start()
            let result = pipeline.run()
            reporter.finish()

            return try finishRun(
                runId: runId,
                parameters: parameters,
                asOf: asOf,
                result: result,
                notificationFailure: notificationFailure,
                ownership: ownership,
                connection: work,
                logger: runLogger
            )
        } catch {
            // The run cannot go on (bad backfill selection, database gone for good, ...): record it as
            // failed, so it does not look alive and can be resumed, then report the error.
            let code = ReconcilerErrorClassifier.exitCode(for: error)
            try? RunRecords(connection: control).fail(
                runId: runId,
                exitCode: code,
                error: String(describing: error),
                resumeCount: ownership.resumeCount
            )
            throw error
        }
    }

    // MARK: - Steps

    /// The error of a run that could not take the run lock, naming the run that holds it.
    func lockedError(_ control: PostgresConnection) throws -> RunLockedError {
        let holder = try RunRecords(connection: control).latestRunning()
        let detail = holder.map {
            "\($0.mode), started \(RFC3339.string($0.startedAt)) on \($0.hostname ?? "?") pid \($0.pid.map(String.init) ?? "?")"
        }
        return RunLockedError(holderRunId: holder?.id, holderDetail: detail)
    }

    /// Reads notification history before the scan (docs/architecture.md, "Notification history"); returns why it
    /// failed when Apple kept failing (the run then ends partial), nil when it worked or there is none to read.
    func pullNotifications(
        _ request: Request,
        parameters: RunParameters,
        runId: Int64,
        asOf: Date,
        connection work: PostgresConnection,
        logger runLogger: Logger
    ) throws -> String? {
        var notificationFailure: String?
        for settings in Self.notificationSources(request) {
            let notificationsHTTP = CurlHTTPClient(
                configuration: CurlHTTPClient.Configuration(caFile: request.caFile)
            )
            defer { notificationsHTTP.shutdown() }
            var endpoints = settings.endpoints
            endpoints.connectTimeout = .milliseconds(
                SecondsConversion.milliseconds(parameters.options.connectTimeoutSeconds)
            )
            endpoints.requestTimeout = .milliseconds(
                SecondsConversion.milliseconds(parameters.options.requestTimeoutSeconds)
            )
            let notifications = try NotificationHistoryReader(
                connection: work,
                client: ServerAPIClient(
                    http: notificationsHTTP,
                    endpoints: endpoints,
                    signer: try settings.api.signer()
                ),
                settings: settings,
                logger: runLogger,
                rateCap: parameters.options.rate,
                maxAttempts: parameters.options.maxAttempts
            )
            do {
                let pulled = try notifications.pull(
                    runId: runId,
                    asOf: asOf,
                    lookback: request.notificationsLookback,
                    dryRun: parameters.options.dryRun
                )
                runLogger.info("run \(runId): \(pulled.line)")
            } catch let error as NotificationHistoryError {
                // Apple kept failing: the night's window is still worth reconciling. The cursor stays, so
                // the next run reads the same notifications again; this run ends partial (exit 2).
                runLogger.error("run \(runId): \(error); reconciling the due window without it")
                notificationFailure = [notificationFailure, error.description].compactMap { $0 }
                    .joined(separator: "; ")
            }
        }
        return notificationFailure
    }

    /// The HTTP client a run asks Apple with: one connection per request in flight, the run's CA file.
    static func httpClient(parameters: RunParameters, request: Request) -> CurlHTTPClient {
        CurlHTTPClient(
            configuration: CurlHTTPClient.Configuration(
                maxConnections: max(8, parameters.options.concurrency),
                maxHostConnections: max(8, parameters.options.concurrency),
                caFile: request.caFile
            )
        )
    }

    /// The run's store, set up as its parameters say: the ledger read with the items when any app uses the App
    /// Store Server API, the rejected schedule, and a backfill writing every ledger again.
    static func store(
        runId: Int64,
        parameters: RunParameters,
        asOf: Date,
        request: Request,
        connection: PostgresConnection,
        readConnection: PostgresConnection
    ) -> RunStore {
        let store = RunStore(
            connection: connection,
            readConnection: readConnection,
            runId: runId,
            dryRun: parameters.options.dryRun,
            verifiedAt: parameters.fixedClock ? asOf : Date()
        )
        let source = parameters.source ?? .verifyReceipt
        store.loadsLedger =
            request.apps.isEmpty ? source == .serverAPI : request.apps.contains { $0.source == .serverAPI }
        store.rejectedRecheck = parameters.selection.rejectedRecheck
        if case .backfill = parameters.selection { store.writesUnchangedLedgers = true }
        return store
    }

    /// The settings whose notification history the run reads first: each App Store Server API app of `--apps`,
    /// else the one app's key when configured.
    static func notificationSources(_ request: Request) -> [ServerAPISettings] {
        request.apps.isEmpty ? [request.serverAPI].compactMap { $0 } : request.apps.compactMap(\.serverAPI)
    }

    /// The run's Apple source: every app of `--apps` behind one router, else the one app the run's parameters
    /// name (rows of other bundle ids end `no_app`; docs/architecture.md, "Several apps"). Exit 78 when settings
    /// are missing.
    func makeRouter(
        _ kind: AppleSourceKind,
        request: Request,
        parameters: RunParameters,
        http: CurlHTTPClient,
        logger: Logger,
        now: @escaping @Sendable () -> Date
    ) throws -> any AppleSource {
        if let stored = parameters.apps, request.apps.isEmpty {
            throw ConfigurationError(
                "this run reconciles several apps (\(stored.keys.sorted().joined(separator: ", "))): "
                    + "give the same --apps FILE to resume it"
            )
        }
        if !request.apps.isEmpty {
            var sources: [String: any AppleSource] = [:]
            for app in request.apps {
                sources[app.bundleId] = try makeSource(
                    app.source,
                    apple: app.apple,
                    serverAPI: app.serverAPI,
                    bundleId: app.bundleId,
                    app: request.apps.count > 1 ? app.bundleId : nil,
                    rate: min(app.rate ?? parameters.options.rate, parameters.options.rate),
                    options: parameters.options,
                    http: http,
                    logger: logger,
                    now: now
                )
            }
            return AppRouterSource(
                sources: sources,
                defaultApp: request.apps.count == 1 ? request.apps[0].bundleId : nil
            )
        }
        let bundleId = kind == .serverAPI ? request.serverAPI?.api.bundleId : parameters.bundleId
        let source = try makeSource(
            kind,
            apple: request.apple,
            serverAPI: request.serverAPI,
            bundleId: parameters.bundleId,
            app: nil,
            rate: parameters.options.rate,
            options: parameters.options,
            http: http,
            logger: logger,
            now: now
        )
        guard let bundleId else { return source }
        return AppRouterSource(sources: [bundleId: source], defaultApp: bundleId)
    }

    /// One app's Apple source (exit 78 when its settings are missing).
    private func makeSource(
        _ kind: AppleSourceKind,
        apple: AppleConfiguration?,
        serverAPI: ServerAPISettings?,
        bundleId: String?,
        app: String?,
        rate: Double,
        options: RunOptions,
        http: CurlHTTPClient,
        logger: Logger,
        now: @escaping @Sendable () -> Date
    ) throws -> any AppleSource {
        if kind == .serverAPI {
            guard let settings = serverAPI else {
                throw ConfigurationError(
                    "this run uses the App Store Server API but no In-App Purchase key is configured "
                        + "(APPLE_PRIVATE_KEY_FILE, APPLE_KEY_ID, APPLE_ISSUER_ID, APPLE_APP_APPLE_ID)"
                )
            }
            var endpoints = settings.endpoints
            endpoints.connectTimeout = .milliseconds(SecondsConversion.milliseconds(options.connectTimeoutSeconds))
            endpoints.requestTimeout = .milliseconds(SecondsConversion.milliseconds(options.requestTimeoutSeconds))
            var budgets = settings.budgets.capped(at: rate)
            budgets.app = app
            return ServerAPISource(
                client: ServerAPIClient(http: http, endpoints: endpoints, signer: try settings.api.signer()),
                budgets: budgets,
                roots: settings.roots,
                bundleId: settings.api.bundleId,
                appAppleId: settings.appAppleId,
                maxAttempts: options.maxAttempts,
                logger: logger,
                now: now
            )
        }
        guard let apple else {
            throw ConfigurationError(
                "this run uses verifyReceipt but no shared secret is configured (APPLE_SHARED_SECRET_FILE)"
            )
        }
        let endpoints = VerifyReceiptEndpoints(
            production: apple.productionURL,
            sandbox: apple.sandboxURL,
            password: apple.sharedSecret.value,
            excludeOldTransactions: options.excludeOldTransactions,
            connectTimeout: .milliseconds(SecondsConversion.milliseconds(options.connectTimeoutSeconds)),
            requestTimeout: .milliseconds(SecondsConversion.milliseconds(options.requestTimeoutSeconds))
        )
        return VerifyReceiptSource(
            client: VerifyReceiptClient(http: http, endpoints: endpoints),
            rate: rate,
            maxAttempts: options.maxAttempts,
            bundleId: bundleId,
            app: app,
            logger: logger,
            now: now
        )
    }

    /// Runs left `running` by a dead process (we hold the lock, so nobody else is running) become `interrupted`.
    private func markDeadRunsInterrupted(_ conn: PostgresConnection) throws {
        for run in try RunRecords(connection: conn).markDeadInterrupted() {
            logger.warning(
                "run \(run.id) was interrupted (last heartbeat \(RFC3339.string(run.lastHeartbeat)), \(run.done) of \(run.due) items done); marked interrupted"
            )
        }
    }

    /// The Apple source stored with the run `--resume [id]` would finish (nil: none stored, or no such run), so a
    /// resumed run asks Apple the way it started even when today's settings would choose otherwise.
    public static func storedSource(connectionString: String, resume id: Int64?) throws -> AppleSourceKind? {
        let conn = try PostgresConnection(connectionString)
        defer { conn.close() }
        return try RunRecords(connection: conn).storedSource(resume: id).flatMap(AppleSourceKind.init(rawValue:))
    }

    func prepareRun(_ request: Request, _ conn: PostgresConnection) throws -> PreparedRun {
        let records = RunRecords(connection: conn)
        if let resume = request.resume {
            let run: StoredRun
            if let id = resume {
                guard let found = try records.run(id: id) else { throw UsageError("--resume \(id): no such run") }
                run = found
            } else {
                guard let found = try records.latestResumable() else {
                    throw UsageError(
                        "--resume: there is no interrupted or failed run to resume (a finished run whose report "
                            + "folder is missing: `renewal-reconciler report RUN_ID` writes it)"
                    )
                }
                run = found
            }
            let id = run.id
            let stored = run.status
            let pendingItems =
                try conn.queryFirst(
                    "SELECT count(*) AS n FROM reconciliation_items WHERE run_id = $1 AND status = 'pending'",
                    [id]
                )?
                .decode("n", as: Int.self) ?? 0
            guard let status = RunStatus(rawValue: stored), status.isResumable(pendingItems: pendingItems) else {
                throw UsageError(
                    "--resume \(id): run \(id) is \(stored); only interrupted or failed runs (or partial runs "
                        + "with pending items) can be resumed"
                        + (stored == RunStatus.completed.rawValue || stored == RunStatus.partial.rawValue
                            ? " (if its report folder is missing, `renewal-reconciler report \(id)` writes it)" : "")
                )
            }
            let parameters = try run.parameters()
            let asOf = run.asOf
            try records.resume(id: id, hostname: ProcessInfo.processInfo.hostName, pid: Int64(getpid()))
            logger.notice("resuming run \(id) (as of \(RFC3339.string(asOf)), parameters as first started)")
            return PreparedRun(id: id, parameters: parameters, asOf: asOf)
        }

        let asOf = request.now ?? Date()
        let parameters = RunParameters(
            selection: request.selection,
            options: request.options,
            bundleId: request.apps.count == 1
                ? request.apps[0].bundleId : request.serverAPI?.api.bundleId ?? request.apple?.bundleId,
            fixedClock: request.now != nil,
            source: request.source,
            apps: request.apps.isEmpty
                ? nil : Dictionary(uniqueKeysWithValues: request.apps.map { ($0.bundleId, $0.source) }),
            workers: request.worker != nil ? true : nil
        )
        if let previous = try records.latestUnfinishedInterrupted() {
            let (id, done, due) = (previous.id, previous.done, previous.due)
            logger.notice(
                "run \(id) was interrupted with \(done) of \(due) items done; its finished work is kept and this new run re-selects what is still due (use `--resume \(id)` to finish run \(id) as planned instead)"
            )
        }
        let id = try records.create(
            mode: request.mode,
            dryRun: request.options.dryRun,
            asOf: asOf,
            parameters: parameters,
            hostname: ProcessInfo.processInfo.hostName,
            pid: Int64(getpid())
        )
        logger.info(
            "run \(id) started: \(request.mode.rawValue)\(request.options.dryRun ? " (dry run: nothing written to subscriptions or the ledger)" : ""), as of \(RFC3339.string(asOf))"
        )
        return PreparedRun(id: id, parameters: parameters, asOf: asOf)
    }

    func finishRun(
        runId: Int64,
        parameters: RunParameters,
        asOf: Date,
        result: ReconciliationPipeline.Result,
        notificationFailure: String?,
        ownership: RunOwnership?,
        connection: PostgresConnection,
        logger: Logger
    ) throws -> Summary {
        let records = RunRecords(connection: connection)
        let counts = try records.itemCounts(runId: runId)
        let (outcomes, done, pending) = (counts.outcomes, counts.done, counts.pending)
        let due = counts.due
        let unresolved = counts.unresolved
        // The run's earlier sessions (a resumed run keeps counting); its batches recorded this session's requests
        // as they went, which this total replaces.
        var stats = ownership?.statsBase ?? AppleRequestStats()
        stats.merge(result.stats)

        let status: RunStatus
        let exitCode: ReconcilerExitCode
        var message: String?
        switch result.stopReason {
        case .configuration(let why)?:
            status = .failed
            exitCode = .configuration
            message =
                "stopped early: Apple reports a configuration error (\(why)); check the shared secret, the In-App Purchase key and ids, and the URLs"
        case .database(let why)?:
            status = .failed
            exitCode = .failure
            message = "database error: \(why); finished items are saved, resume with `run --resume \(runId)`"
        case .tlsRefused(let why)?:
            status = .failed
            exitCode = .configuration
            message =
                "stopped early: \(why); \(pending) items pending (rows untouched); resume with `run --resume \(runId)` once HTTPS to Apple works"
        case .appleUnreachable(let why)?:
            status = .partial
            exitCode = .appleUnavailable
            message =
                "\(why); \(pending) items pending (rows untouched); resume with `run --resume \(runId)` once Apple answers again"
        case .interrupted(let why)?:
            status = .interrupted
            exitCode = .failure
            message = "interrupted (\(why)) with \(pending) items pending; resume with `run --resume \(runId)`"
        case nil:
            if pending > 0 {
                status = .interrupted
                exitCode = .failure
                message = "\(pending) items still pending; resume with `run --resume \(runId)`"
            } else if due > 0, Double(unresolved) / Double(due) > parameters.options.maxUnresolvedFraction {
                status = .partial
                exitCode = .unresolvedAboveThreshold
                message =
                    "\(unresolved) of \(due) items unresolved (above --max-unresolved \(parameters.options.maxUnresolvedFraction * 100)%); they stay due for the next run"
            } else if let notificationFailure {
                status = .partial
                exitCode = .unresolvedAboveThreshold
                message = "\(notificationFailure); the next run reads those notifications again"
            } else {
                status = .completed
                exitCode = .success
            }
        }
        // Only a run still running is finished, and by one process: the others find it finished.
        let ending = RunRecords.Ending(
            status: status,
            exitCode: exitCode,
            message: message,
            stats: stats,
            items: counts
        )
        guard try records.finish(runId: runId, ending, resumeCount: ownership?.resumeCount) else {
            if ownership != nil { throw RunOwnershipLostError(runId: runId) }
            throw RunFinishedElsewhereError(runId: runId)
        }
        if status == .completed, !parameters.options.dryRun {
            // The day's trend snapshot, right after the run completed (docs/reports.md, "Trends across nights"). A failure
            // is logged and leaves the run completed: `report --trends --rebuild` recomputes the day.
            do {
                if let day = try TrendSnapshotWriter(connection: connection).record(runId: runId) {
                    logger.info("run \(runId) trend snapshot \(day.date): \(day.rows) rows")
                }
            } catch {
                logger.error(
                    "run \(runId): the trend snapshot was not recorded (\(error)); `renewal-reconciler report --trends --rebuild` recomputes it"
                )
            }
        }
        let summaryLine = outcomes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let rate = String(format: "%.1f", stats.achievedRate)
        if exitCode == .success {
            logger.info(
                "run \(runId) \(status): \(done)/\(due) items, \(summaryLine); \(stats.requests) Apple requests at \(rate)/s"
            )
        } else {
            logger.error("run \(runId) \(status): \(done)/\(due) items, \(summaryLine). \(message ?? "")")
        }
        return Summary(
            runId: runId,
            status: status,
            exitCode: exitCode,
            dryRun: parameters.options.dryRun,
            asOf: asOf,
            due: due,
            done: done,
            pending: pending,
            outcomes: outcomes,
            stats: stats,
            message: message
        )
    }
}

/// A flag set from one queue and read from another.
final class LockedFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() {
        lock.lock()
        value = true
        lock.unlock()
    }
    var isSet: Bool {
        lock.lock()
        defer { lock.unlock() }
        return value
    }
}
