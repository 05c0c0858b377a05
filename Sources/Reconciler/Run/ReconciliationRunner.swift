import CurlHTTP
import Dispatch
import Foundation
import Logging
import Postgres

/// One night's run, from start to end, for one process or many (docs/architecture.md, "One run path"): take the run
/// lock, enter the run (create, resume or join it), prepare it (notification history, then the scan into items),
/// process the items through the pipeline in rounds, finish, and write the reports. `run`, `run --resume`, `backfill`
/// and `run --worker` all go through this one sequence; a `RunCoordination` says how this process shares the run.
///
/// Crash safety: every item result is committed with the row changes it causes; the run row tracks the scan cursor, a
/// heartbeat and counts. A run whose process died is found `running` by the next run (which holds the lock, so the
/// other cannot be alive) and marked `interrupted`; `--resume` finishes it.
public final class ReconciliationRunner: @unchecked Sendable {
    /// The advisory lock key all runs take (session level, released when the connection closes).
    public static let lockKey: Int64 = 0x5245_4E45_5741_4C53  // "RENEWALS"

    public enum Mode: String, Sendable, Codable {
        case nightly, backfill, demo
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
        let coordination: any RunCoordination =
            request.worker.map { WorkerCoordination(runner: self, settings: $0) } ?? SoleCoordination(runner: self)
        // Only the process that finishes the run writes its reports (once).
        var (summary, writesReports) = try run(request, coordination)
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

    /// The one sequence: lock and enter, then work the run; a run this process cannot go on with is abandoned as the
    /// coordination says (a one-process run is recorded failed, so it can be resumed).
    private func run(
        _ request: Request,
        _ coordination: any RunCoordination
    ) throws -> (Summary, writesReports: Bool) {
        let control = try PostgresConnection(connectionString)
        defer { control.close() }
        try SchemaRequirement.check(control)
        // The run lock's own connection: it takes the lock again after a reconnect (a restarted server forgets it),
        // or finds it taken and stops the run (docs/architecture.md, "The run lock").
        let lock = try PostgresConnection(connectionString)
        defer { lock.close() }
        let run: JoinedRun
        guard try coordination.takeRunLock(lock) else { throw try lockedError(control) }
        switch try coordination.enter(request, control: control) {
        case .nothingToDo(let summary): return (summary, false)
        case .work(let joined): run = joined
        }
        var runLogger = logger
        runLogger[metadataKey: "run"] = "\(run.id)"
        coordination.label(&runLogger)
        do {
            return try work(run, request, coordination, control: control, lock: lock, logger: runLogger)
        } catch {
            coordination.abandon(run, after: error, control: control)
            throw error
        }
    }

    /// The run lock watched and the heartbeat beating (on the lock's connection and its own queue) for as long as the
    /// process works: notification history, the scan, then the rounds of the pipeline, which sends only while the
    /// lock is confirmed (docs/architecture.md, "The run lock").
    private func work(
        _ run: JoinedRun,
        _ request: Request,
        _ coordination: any RunCoordination,
        control: PostgresConnection,
        lock: PostgresConnection,
        logger runLogger: Logger
    ) throws -> (Summary, writesReports: Bool) {
        let current = CurrentPipeline()
        let lockQueue = DispatchQueue(label: "renewal-reconciler.run-lock")
        let lockWatch = RunLockWatch(connection: lock, queue: lockQueue) { why in
            runLogger.error("\(why)")
            current.stop(why)
        }
        let heartbeat = startHeartbeat(run, coordination, lockWatch, current, on: lockQueue, logger: runLogger)
        defer { heartbeat.cancel() }
        lockWatch.start()
        defer { lockWatch.cancel() }
        // From here on SIGINT/SIGTERM stop the process gently, also during preparation (the scan completes, then no
        // round starts): every item not finished stays pending for `--resume` or the other workers.
        let signals = SignalTrap { signal in
            runLogger.warning("\(coordination.signalNotice(signal, run: run))")
            current.stop(signal)
        }
        defer { signals.cancel() }

        // Opened while the run already holds the database's locks: a server restarting now is waited for.
        let work = try DatabaseRetry.standard.connect(connectionString)
        defer { work.close() }
        // Notification history first: what Apple told us since the last run makes those subscriptions due whatever
        // their expiry (docs/architecture.md, "Notification history").
        let preparation = try coordination.prepare(
            RunPreparationSteps(run: run, work: work, control: control) {
                try self.pullNotifications(
                    request,
                    parameters: run.parameters,
                    runId: run.id,
                    asOf: run.asOf,
                    connection: work,
                    logger: runLogger
                )
            }
        )
        try coordination.beforeSending(run, work: work, current: current)
        let total = try rounds(run, request, coordination, preparation, work, lockWatch, current, logger: runLogger)
        return try coordination.finish(
            RunRoundsEnding(
                run: run,
                total: total,
                stopRequested: current.stopRequested,
                preparation: preparation,
                work: work,
                control: control,
                logger: runLogger,
                runEndedElsewhere: current.runEndedElsewhere
            )
        )
    }

    /// The heartbeat, on the lock's queue and through the lock watch (a heartbeat that finds the lock lost closes the
    /// send gate too): once at once, then every `heartbeatInterval`.
    private func startHeartbeat(
        _ run: JoinedRun,
        _ coordination: any RunCoordination,
        _ lockWatch: RunLockWatch,
        _ current: CurrentPipeline,
        on queue: DispatchQueue,
        logger: Logger
    ) -> any DispatchSourceTimer {
        let beatOnce: @Sendable () -> Void = {
            guard !lockWatch.isLost else { return }
            do {
                try lockWatch.withConnection { try coordination.beat(run, $0, current) }
            } catch let error as PostgresError where error.code == .advisoryLockLost {
                // The watch has stopped the run (`onLost`).
            } catch {
                logger.warning("heartbeat failed (will retry): \(error)")
            }
        }
        queue.sync { beatOnce() }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + coordination.heartbeatInterval, repeating: coordination.heartbeatInterval)
        timer.setEventHandler(handler: beatOnce)
        timer.resume()
        return timer
    }

    /// The pipeline, round after round while the coordination finds work (a one-process run: one round over every
    /// pending item), until a round stops or the process is asked to stop.
    private func rounds(
        _ run: JoinedRun,
        _ request: Request,
        _ coordination: any RunCoordination,
        _ preparation: RunPreparation,
        _ work: PostgresConnection,
        _ lockWatch: RunLockWatch,
        _ current: CurrentPipeline,
        logger runLogger: Logger
    ) throws -> ReconciliationPipeline.Result {
        let parameters = run.parameters
        let http = Self.httpClient(parameters: parameters, request: request)
        defer { http.shutdown() }
        let reader = try DatabaseRetry.standard.connect(connectionString)
        defer { reader.close() }
        let fixedNow: Date? = parameters.fixedClock ? run.asOf : nil
        let source = try makeRouter(
            request: request,
            parameters: parameters,
            http: http,
            logger: runLogger,
            now: { fixedNow ?? Date() }
        )
        let reporter = try progressReporter(run, request, coordination, preparation, work, logger: runLogger)
        reporter.start()
        defer { reporter.finish() }

        var total = ReconciliationPipeline.Result()
        while current.stopRequested == nil {
            let store = Self.store(
                runId: run.id,
                parameters: parameters,
                asOf: run.asOf,
                request: request,
                connection: work,
                readConnection: reader
            )
            coordination.configure(store, for: run, soFar: total)
            let pipeline = try ReconciliationPipeline(
                store: store,
                source: source,
                options: parameters.options,
                logger: runLogger,
                sendGate: lockWatch,
                progress: { [written = total.written] roundWritten, unresolved, stats in
                    reporter.update(written: written + roundWritten, unresolved: unresolved)
                    current.roundProgress(written: roundWritten, stats: stats)
                }
            )
            current.start(pipeline)
            let result = pipeline.run()
            total.written += result.written
            total.outcomes.merge(result.outcomes, uniquingKeysWith: +)
            total.stats.merge(result.stats)
            total.stopReason = result.stopReason
            current.finished(total)
            guard result.stopReason == nil, current.stopRequested == nil,
                try coordination.anotherRound(run, soFar: total, work: work)
            else { break }
        }
        return total
    }

    /// The run's progress (`--progress`) over every item it selected, those an earlier session finished counted done.
    private func progressReporter(
        _ run: JoinedRun,
        _ request: Request,
        _ coordination: any RunCoordination,
        _ preparation: RunPreparation,
        _ work: PostgresConnection,
        logger: Logger
    ) throws -> ProgressReporter {
        let alreadyDone = try RunRecords(connection: work).itemCounts(runId: run.id).done
        logger.info(
            "run \(run.id): \(preparation.due) subscriptions selected\(alreadyDone > 0 ? ", \(alreadyDone) already done" : "")"
        )
        return ProgressReporter(
            style: coordination.showsProgress ? request.progressStyle : .quiet,
            total: preparation.due,
            alreadyDone: alreadyDone
        )
    }
}
