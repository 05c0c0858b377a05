import CivilTime
import CurlHTTP
import Dispatch
import Foundation
import Logging
import Postgres

/// `run --worker` (docs/architecture.md, "Workers"): several processes, on one host or many, share one run
/// through PostgreSQL. Each worker joins the running worker run (or starts it: the first one in a transaction
/// under an advisory lock, so workers started together agree on one run), registers in `run_workers` with a
/// heartbeat, helps the scan (one at a time, resumable), then claims chunks of pending items, leased, and works
/// them through the same pipeline and store as a one-process run, each app's rate limits divided among the live
/// workers. The worker that finds no pending item left completes the run, once, and writes its reports.
extension ReconciliationRunner {
    /// The classes of the two-key advisory locks on one worker run: preparing it (notifications and scan) and
    /// completing it.
    static let prepareLockClass: Int32 = 0x5257_5031  // "RWP1"
    static let finishLockClass: Int32 = 0x5257_4631  // "RWF1"

    func runWorker(_ request: Request, _ settings: WorkerSettings) throws -> (Summary, writesReports: Bool) {
        let control = try PostgresConnection(connectionString)
        defer { control.close() }
        try SchemaRequirement.check(control)
        // The run lock: shared among workers, exclusive against a one-process run (which takes the same key
        // exclusively). Held by the heartbeat's connection, which takes it again at its first heartbeat after a
        // reconnect (a restarted server forgets it) or stops the worker if a one-process run took it meanwhile.
        let beat = try PostgresConnection(connectionString)
        defer { beat.close() }
        guard try beat.tryAdvisoryLockShared(key: Self.lockKey) else { throw try lockedError(control) }

        let workerId =
            "\(ProcessInfo.processInfo.hostName):\(getpid()):\(String(UInt32.random(in: 0...UInt32.max), radix: 16))"
        let joinedOrCreated: WorkerJoin = try control.transaction { db in
            try db.execute("SELECT pg_advisory_xact_lock($1)", [Self.lockKey &+ 1])
            let records = WorkerRecords(connection: db)
            let join: WorkerJoin
            if let joined = try records.running() {
                join = .run(id: joined.id, parameters: try joined.parameters(), asOf: joined.asOf, created: false)
            } else if let done = try Self.completedWithinJoinWindow(db, settings, asOf: request.now ?? Date()) {
                return .nothingToDo(completed: done)
            } else {
                var fresh = request
                fresh.resume = nil
                let prepared = try prepareRun(fresh, db)
                // The creator holds the prepare lock from before any other worker can see the run (a session lock:
                // it outlives this transaction), so none scans and divides the items into chunks before the
                // creator has pulled notifications, which can add items.
                try Self.lockRun(Self.prepareLockClass, prepared.id, db)
                join = .run(id: prepared.id, parameters: prepared.parameters, asOf: prepared.asOf, created: true)
            }
            if case .run(let id, _, _, _) = join {
                try records.register(
                    runId: id,
                    workerId: workerId,
                    hostname: ProcessInfo.processInfo.hostName,
                    pid: Int64(getpid())
                )
            }
            return join
        }
        let runId: Int64
        let parameters: RunParameters
        let asOf: Date
        let created: Bool
        switch joinedOrCreated {
        case .nothingToDo(let completed): return (try nothingToDo(completed, control), false)
        case .run(let id, let runParameters, let runAsOf, let isNew):
            (runId, parameters, asOf, created) = (id, runParameters, runAsOf, isNew)
        }
        let runLogger: Logger = {
            var l = logger
            l[metadataKey: "run"] = "\(runId)"
            l[metadataKey: "worker"] = "\(workerId)"
            return l
        }()
        runLogger.info("worker \(workerId) \(created ? "started" : "joined") run \(runId)")
        let lease = WorkerLease(workerId: workerId, seconds: settings.leaseSeconds)

        let work = try PostgresConnection(connectionString)
        defer { work.close() }
        // Notifications (the worker that started the run) and the scan, one worker at a time; the scan resumes
        // where a worker that died left it and is a no-op once complete.
        var notificationFailure: String?
        if !created { try Self.lockRun(Self.prepareLockClass, runId, control) }
        do {
            if created {
                notificationFailure = try pullNotifications(
                    request,
                    parameters: parameters,
                    runId: runId,
                    asOf: asOf,
                    connection: work,
                    logger: runLogger
                )
            }
            _ = try RunScanner(connection: work, runId: runId, asOf: asOf).scan(parameters.selection)
            // The scan is complete: the first worker here divides the items into the chunks workers claim.
            try WorkerLease.divide(runId: runId, work)
        } catch {
            try? Self.unlockRun(Self.prepareLockClass, runId, control)
            throw error
        }
        try Self.unlockRun(Self.prepareLockClass, runId, control)

        // Heartbeat on its own connection: registration, leases, the run's heartbeat, this worker's share.
        let current = CurrentPipeline()
        let heartbeatQueue = DispatchQueue(label: "renewal-reconciler.worker-heartbeat")
        // The shared run lock confirmed every half second on the heartbeat's connection, and by every heartbeat; the
        // pipeline sends only while it is (docs/architecture.md, "The run lock").
        let lockWatch = RunLockWatch(connection: beat, queue: heartbeatQueue) { why in
            runLogger.error("\(why), leaving the run")
            current.stopRequested = "lost the run lock"
            current.pipeline?.requestStop(.interrupted(why))
        }
        let heartbeat = DispatchSource.makeTimerSource(queue: heartbeatQueue)
        let beatOnce: @Sendable () -> Void = {
            guard !lockWatch.isLost else { return }
            do {
                let share = try lockWatch.withConnection { conn in
                    try Self.beat(conn, runId: runId, lease: lease, settings: settings, progress: current.progressSoFar)
                }
                current.share = share.share
                current.pipeline?.setRateShare(share.share)
                if share.runStatus != .running {
                    let ended = share.runStatus?.rawValue ?? "gone"
                    current.pipeline?.requestStop(.interrupted("the run ended (\(ended))"))
                }
            } catch let error as PostgresError where error.code == .advisoryLockLost {
                // The watch has stopped the worker (`onLost`).
            } catch {
                runLogger.warning("worker heartbeat failed (will retry): \(error)")
            }
        }
        heartbeatQueue.sync { beatOnce() }
        // At least 1 ms: a 0 interval would renew in a busy loop (the flag's bound is 1 s).
        let interval = DispatchTimeInterval.milliseconds(
            Int(max(1, SecondsConversion.milliseconds(settings.heartbeatSeconds)))
        )
        heartbeat.schedule(deadline: .now() + interval, repeating: interval)
        heartbeat.setEventHandler(handler: beatOnce)
        heartbeat.resume()
        defer { heartbeat.cancel() }
        lockWatch.start()
        defer { lockWatch.cancel() }
        // Every batch is fenced by the run's resume count as this worker joined it (a one-process `run --resume`
        // after a database restart changes it).
        let ownerResumeCount = try RunRecords(connection: work).resumeCount(runId: runId)
        // The workers already running lower their share at their next heartbeat: this one waits until every live
        // worker has recorded a share no larger than its own, then a second more for their send windows to drain,
        // so together they never exceed a limit (docs/architecture.md, "Workers").
        if current.share < 1 {
            try Self.waitForShares(work, runId: runId, lease: lease, settings: settings, share: { current.share })
            Thread.sleep(forTimeInterval: 1.1)
        }

        let http = Self.httpClient(parameters: parameters, request: request)
        defer { http.shutdown() }
        let reader = try PostgresConnection(connectionString)
        defer { reader.close() }
        let fixedNow: Date? = parameters.fixedClock ? asOf : nil
        let appleSource = try makeRouter(
            parameters.source ?? .verifyReceipt,
            request: request,
            parameters: parameters,
            http: http,
            logger: runLogger,
            now: { fixedNow ?? Date() }
        )
        let signals = SignalTrap { signal in
            runLogger.warning("received \(signal): finishing requests in flight, then leaving the run to the others")
            current.stopRequested = signal
            current.pipeline?.requestStop(.interrupted(signal))
        }
        defer { signals.cancel() }

        var total = ReconciliationPipeline.Result()
        var stop: ReconciliationPipeline.StopReason?
        while current.stopRequested == nil {
            let store = Self.store(
                runId: runId,
                parameters: parameters,
                asOf: asOf,
                request: request,
                connection: work,
                readConnection: reader
            )
            store.lease = lease
            store.ownerResumeCount = ownerResumeCount
            store.statsTarget = .worker(base: total.stats)
            let pipeline = try ReconciliationPipeline(
                store: store,
                source: appleSource,
                options: parameters.options,
                logger: runLogger,
                sendGate: lockWatch,
                progress: { written, _, stats in current.roundProgress = (written, stats) }
            )
            // The pipeline is made current before its share is set: a heartbeat in between sets it again.
            current.pipeline = pipeline
            pipeline.setRateShare(current.share)
            let result = pipeline.run()
            current.pipeline = nil
            total.written += result.written
            total.outcomes.merge(result.outcomes, uniquingKeysWith: +)
            total.stats.merge(result.stats)
            current.finishedRounds(written: total.written, stats: total.stats)
            try WorkerRecords(connection: work).recordRounds(
                runId: runId,
                workerId: workerId,
                written: total.written,
                stats: total.stats
            )
            if let reason = result.stopReason {
                stop = reason
                break
            }
            // Items other workers hold (or held, when they died) come free when their leases run out.
            let (pending, status) = try WorkerRecords(connection: work).pendingAndStatus(runId: runId)
            if pending == 0 || status != .running { break }
            let strays = try WorkerLease.coverStrays(runId: runId, work)
            if strays > 0 {
                runLogger.warning("\(strays) pending items were in no unfinished chunk: they have one now")
                continue
            }
            runLogger.info("\(pending) items pending in chunks other workers hold: looking again in a second")
            Thread.sleep(forTimeInterval: min(1, settings.heartbeatSeconds))
        }
        if lease.lostResultCount > 0 {
            runLogger.warning(
                "\(lease.lostResultCount) results not written: their leases had gone to another worker (its result is kept)"
            )
        }

        // Leaving on a signal (or Apple unreachable, or a database failure only this worker saw): give the items
        // back at once and let the others finish. A configuration error (or refused TLS) ends the whole run.
        let endsRun: Bool
        switch stop {
        case .configuration?, .tlsRefused?: endsRun = true
        case .interrupted?, .appleUnreachable?, .database?: endsRun = false
        case nil: endsRun = current.stopRequested == nil
        }
        if !endsRun {
            try? lease.release(runId: runId, work)
            // The others raise their share once this worker is marked stopped: first let its last sends leave the
            // one-second window Apple counts them in (a slot is held at most 1.05 s, "The send window").
            Thread.sleep(forTimeInterval: 1.1)
        }
        try WorkerRecords(connection: work).stop(runId: runId, workerId: workerId)
        guard endsRun else {
            runLogger.notice(
                "worker \(workerId) left run \(runId) (\(stop.map { "\($0)" } ?? "stopped")): the other workers finish it"
            )
            var summary = try runSummary(runId: runId, parameters: parameters, asOf: asOf, connection: work)
            summary.exitCode =
                stop == nil && current.stopRequested == nil ? ReconcilerExitCode.success : ReconcilerExitCode.failure
            return (summary, false)
        }

        // Completing the run: once, by the first worker to get here with nothing pending (or to stop it).
        try Self.lockRun(Self.finishLockClass, runId, control)
        defer { try? Self.unlockRun(Self.finishLockClass, runId, control) }
        let status = try RunRecords(connection: work).status(runId: runId)
        guard status == .running else {
            return (try runSummary(runId: runId, parameters: parameters, asOf: asOf, connection: work), false)
        }
        var all = ReconciliationPipeline.Result()
        all.stopReason = stop
        // Every worker's requests, a killed one's up to its last heartbeat; the workers ran side by side, so the
        // run took as long as the longest of them, not their sum.
        var longest = 0.0
        for stats in try WorkerRecords(connection: work).appleStats(runId: runId) {
            longest = max(longest, stats.elapsedSeconds)
            all.stats.merge(stats)
        }
        all.stats.elapsedSeconds = longest
        all.stats.achievedRate = longest > 0 ? Double(all.stats.requests) / longest : 0
        do {
            let summary = try finishRun(
                runId: runId,
                parameters: parameters,
                asOf: asOf,
                result: all,
                notificationFailure: notificationFailure,
                ownership: nil,
                connection: work,
                logger: runLogger
            )
            return (summary, true)
        } catch let error as RunFinishedElsewhereError {
            // The finish lock is a session lock: a database restart drops it, and another worker may have taken it.
            runLogger.notice("\(error)")
            return (try runSummary(runId: runId, parameters: parameters, asOf: asOf, connection: work), false)
        }
    }

    /// Takes, waiting for it, the per-run advisory lock of `lockClass` on `conn`: a session lock, held until
    /// `unlockRun` or the connection closes (also when taken inside a transaction that then commits).
    static func lockRun(_ lockClass: Int32, _ runId: Int64, _ conn: PostgresConnection) throws {
        try conn.execute("SELECT pg_advisory_lock($1::int, $2::int)", [lockClass, Int32(truncatingIfNeeded: runId)])
    }

    static func unlockRun(_ lockClass: Int32, _ runId: Int64, _ conn: PostgresConnection) throws {
        try conn.execute("SELECT pg_advisory_unlock($1::int, $2::int)", [lockClass, Int32(truncatingIfNeeded: runId)])
    }

    /// The latest completed worker run of the same night: its as-of instant (its start, or its `--now`) within the
    /// join window of this worker's, if any.
    static func completedWithinJoinWindow(
        _ db: PostgresConnection,
        _ settings: WorkerSettings,
        asOf: Date
    ) throws -> StoredRun? {
        guard settings.joinWindowSeconds > 0 else { return nil }
        return try WorkerRecords(connection: db).completed(near: asOf, seconds: settings.joinWindowSeconds)
    }

    /// A worker that came after the night's worker run completed: it says which run that was and exits 0.
    private func nothingToDo(_ run: StoredRun, _ control: PostgresConnection) throws -> Summary {
        let runId = run.id
        let started = run.startedAt
        logger.notice(
            """
            worker run \(runId), started \(RFC3339.string(started)), has completed within --join-window: nothing \
            to do (--join-window 0 starts a new run)
            """
        )
        return try runSummary(
            runId: runId,
            parameters: try run.parameters(),
            asOf: run.asOf,
            connection: control
        )
    }

    /// The run as it stands, for a worker that did not complete it.
    private func runSummary(
        runId: Int64,
        parameters: RunParameters,
        asOf: Date,
        connection: PostgresConnection
    ) throws
        -> Summary
    {
        let run = try RunRecords(connection: connection).standing(runId: runId)
        let code = run?.exitCode.flatMap { ReconcilerExitCode(rawValue: Int32($0)) }
        return Summary(
            runId: runId,
            status: run?.status ?? .running,
            exitCode: code ?? .success,
            dryRun: parameters.options.dryRun,
            asOf: asOf,
            due: run?.due ?? 0,
            done: run?.done ?? 0,
            pending: run?.pending ?? 0,
            outcomes: [:],
            stats: run?.stats ?? AppleRequestStats.fromJSON(nil),
            message: run?.error
        )
    }

    /// Waits until every other live worker of the run has recorded a share no larger than this one's (they
    /// lowered it at a heartbeat), at most a lease timeout: a worker silent that long is no longer counted live.
    static func waitForShares(
        _ conn: PostgresConnection,
        runId: Int64,
        lease: WorkerLease,
        settings: WorkerSettings,
        share: () -> Double
    ) throws {
        let deadline = Date().addingTimeInterval(settings.leaseSeconds)
        while Date() < deadline {
            let above = try WorkerRecords(connection: conn).othersAboveShare(
                runId: runId,
                workerId: lease.workerId,
                leaseSeconds: settings.leaseSeconds,
                share: share()
            )
            if above == 0 { return }
            Thread.sleep(forTimeInterval: min(0.2, settings.heartbeatSeconds / 4))
        }
    }

    /// One heartbeat: this worker's registration and leases renewed, the run's heartbeat, and its share of the
    /// rate limits (1 / the live workers: those whose heartbeat is younger than the lease and who did not leave).
    static func beat(
        _ conn: PostgresConnection,
        runId: Int64,
        lease: WorkerLease,
        settings: WorkerSettings,
        progress: (written: Int, stats: AppleRequestStats)? = nil
    ) throws
        -> (share: Double, runStatus: RunStatus?)
    {
        try lease.renew(runId: runId, conn)
        // This worker counts itself live whatever its last recorded heartbeat (`WorkerRecords.beatRun`).
        let records = WorkerRecords(connection: conn)
        let run = try records.beatRun(runId: runId, workerId: lease.workerId, leaseSeconds: settings.leaseSeconds)
        let share = 1 / Double(max(1, run.liveWorkers))
        // With the results written and requests made so far (`WorkerRecords.beatWorker`).
        try records.beatWorker(runId: runId, workerId: lease.workerId, share: share, progress: progress)
        return (share, run.runStatus)
    }
}

/// The pipeline a worker is running now, its share, its results and request statistics so far and whether it was
/// asked to leave: set on the worker's thread (and the pipeline's progress), read from its heartbeat and signal
/// handlers.
final class CurrentPipeline: @unchecked Sendable {
    private let lock = NSLock()
    private var _pipeline: ReconciliationPipeline?
    private var _share = 1.0
    private var _stop: String?
    private var _finished = (written: 0, stats: AppleRequestStats())
    private var _round = (written: 0, stats: AppleRequestStats())

    var pipeline: ReconciliationPipeline? {
        get { locked { _pipeline } }
        set { locked { _pipeline = newValue } }
    }
    var share: Double {
        get { locked { _share } }
        set { locked { _share = newValue } }
    }
    var stopRequested: String? {
        get { locked { _stop } }
        set { locked { _stop = newValue } }
    }
    /// The running round's results written and request statistics, as of its last batch write.
    var roundProgress: (written: Int, stats: AppleRequestStats) {
        get { locked { _round } }
        set { locked { _round = newValue } }
    }
    /// The finished rounds' results and statistics (a round's own are then in them).
    func finishedRounds(written: Int, stats: AppleRequestStats) {
        locked {
            _finished = (written, stats)
            _round = (0, AppleRequestStats())
        }
    }
    /// The worker's results and requests so far: the finished rounds' and the running one's.
    var progressSoFar: (written: Int, stats: AppleRequestStats) {
        locked {
            var stats = _finished.stats
            stats.merge(_round.stats)
            return (_finished.written + _round.written, stats)
        }
    }

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }
}
