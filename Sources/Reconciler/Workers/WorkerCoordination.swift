import CivilTime
import Dispatch
import Foundation
import Logging
import Postgres

/// A worker of a shared run (`run --worker`; docs/architecture.md, "Workers"): several processes, on one host or many,
/// share one run through PostgreSQL. Each worker takes the run lock shared (exclusive against a one-process run),
/// joins the running worker run (or starts it: the first one in a transaction under an advisory lock, so workers
/// started together agree on one run), registers in `run_workers` with a heartbeat, helps the scan (one at a time,
/// resumable), then claims chunks of pending items, leased, round after round, each app's rate limits divided among
/// the live workers. The worker that finds no pending item left completes the run, once, and writes its reports.
final class WorkerCoordination: RunCoordination {
    /// The classes of the two-key advisory locks on one worker run: preparing it (notifications and scan) and
    /// completing it.
    static let prepareLockClass: Int32 = 0x5257_5031  // "RWP1"
    static let finishLockClass: Int32 = 0x5257_4631  // "RWF1"

    let runner: ReconciliationRunner
    let settings: WorkerSettings
    let lease: WorkerLease
    var workerId: String { lease.workerId }

    init(runner: ReconciliationRunner, settings: WorkerSettings) {
        self.runner = runner
        self.settings = settings
        let workerId =
            "\(ProcessInfo.processInfo.hostName):\(getpid()):\(String(UInt32.random(in: 0...UInt32.max), radix: 16))"
        self.lease = WorkerLease(workerId: workerId, seconds: settings.leaseSeconds)
    }

    /// At least 1 ms: a 0 interval would renew in a busy loop (the flag's bound is 1 s).
    var heartbeatInterval: DispatchTimeInterval {
        .milliseconds(Int(max(1, SecondsConversion.milliseconds(settings.heartbeatSeconds))))
    }
    let showsProgress = false

    /// Shared among workers, exclusive against a one-process run (which takes the same key exclusively).
    func takeRunLock(_ lock: PostgresConnection) throws -> Bool {
        try lock.tryAdvisoryLockShared(key: ReconciliationRunner.lockKey)
    }

    func enter(_ request: ReconciliationRunner.Request, control: PostgresConnection) throws -> RunEntry {
        let run: JoinedRun
        let created: Bool
        switch try control.transaction({ try join(request, $0) }) {
        case .nothingToDo(let completed): return .nothingToDo(try nothingToDo(completed, control))
        case .run(let joined, let isNew): (run, created) = (joined, isNew)
        }
        var logger = runner.logger
        logger[metadataKey: "run"] = "\(run.id)"
        label(&logger)
        logger.info("worker \(workerId) \(created ? "started" : "joined") run \(run.id)")
        return .work(run)
    }

    /// In one transaction under an advisory lock: the running worker run joined, or the night's completed one found,
    /// or a new one created.
    private func join(
        _ request: ReconciliationRunner.Request,
        _ db: PostgresConnection
    ) throws -> WorkerJoin {
        try db.execute("SELECT pg_advisory_xact_lock($1)", [ReconciliationRunner.lockKey &+ 1])
        let records = WorkerRecords(connection: db)
        let prepared: PreparedRun
        let created: Bool
        if let running = try records.running() {
            prepared = PreparedRun(id: running.id, parameters: try running.parameters(), asOf: running.asOf)
            created = false
        } else if let done = try completedWithinJoinWindow(db, asOf: request.now ?? Date()) {
            return .nothingToDo(completed: done)
        } else {
            var fresh = request
            fresh.resume = nil
            prepared = try runner.prepareRun(fresh, db)
            // The creator holds the prepare lock from before any other worker can see the run (a session lock: it
            // outlives this transaction), so none scans and divides the items into chunks before the creator has
            // pulled notifications, which can add items.
            try Self.lockRun(Self.prepareLockClass, prepared.id, db)
            created = true
        }
        try records.register(
            runId: prepared.id,
            workerId: workerId,
            hostname: ProcessInfo.processInfo.hostName,
            pid: Int64(getpid())
        )
        // Every batch is fenced by the run's resume count as this worker joined it (a one-process `run --resume`
        // after a database restart changes it). A worker's own requests start at zero (its `run_workers` row).
        let resumeCount = try RunRecords(connection: db).resumeCount(runId: prepared.id)
        let run = JoinedRun(
            prepared: prepared,
            readsNotifications: created,
            ownership: RunOwnership(resumeCount: resumeCount, statsBase: AppleRequestStats())
        )
        return .run(run, created: created)
    }

    func label(_ logger: inout Logger) {
        logger[metadataKey: "worker"] = "\(workerId)"
    }

    /// Notifications (the worker that started the run) and the scan, one worker at a time; the scan resumes where a
    /// worker that died left it and is a no-op once complete. The first worker past it divides the items into chunks.
    func prepare(_ steps: RunPreparationSteps) throws -> RunPreparation {
        // Every step is safe to repeat (the scan resumes from its cursor, the division happens once), so a worker
        // preparing while PostgreSQL restarts prepares again once it is back instead of leaving the run.
        try DatabaseRetry.standard.run { try prepareOnce(steps) }
    }

    private func prepareOnce(_ steps: RunPreparationSteps) throws -> RunPreparation {
        let (run, control) = (steps.run, steps.control)
        if !run.readsNotifications { try Self.lockRun(Self.prepareLockClass, run.id, control) }
        do {
            let failure = run.readsNotifications ? try steps.readNotifications() : nil
            let due = try steps.scan()
            try WorkerLease.divide(runId: run.id, steps.work)
            try Self.unlockRun(Self.prepareLockClass, run.id, control)
            return RunPreparation(due: due, notificationFailure: failure)
        } catch {
            try? Self.unlockRun(Self.prepareLockClass, run.id, control)
            throw error
        }
    }

    /// Registration and leases renewed, the run's heartbeat, this worker's share; a run that ended stops the worker.
    func beat(_ run: JoinedRun, _ connection: PostgresConnection, _ current: CurrentPipeline) throws {
        let beat = try Self.beat(
            connection,
            runId: run.id,
            lease: lease,
            settings: settings,
            progress: current.progressSoFar
        )
        current.setShare(beat.share)
        if beat.runStatus != .running {
            current.stopRound("the run ended (\(beat.runStatus?.rawValue ?? "gone"))")
        }
    }

    /// The workers already running lower their share at their next heartbeat: this one waits until every live worker
    /// has recorded a share no larger than its own, then a second more for their send windows to drain, so together
    /// they never exceed a limit (docs/architecture.md, "Workers").
    func beforeSending(_ run: JoinedRun, work: PostgresConnection, current: CurrentPipeline) throws {
        guard current.share < 1 else { return }
        try Self.waitForShares(work, runId: run.id, lease: lease, settings: settings, share: { current.share })
        Thread.sleep(forTimeInterval: 1.1)
    }

    func configure(_ store: RunStore, for run: JoinedRun, soFar: ReconciliationPipeline.Result) {
        store.lease = lease
        store.ownerResumeCount = run.ownership.resumeCount
        store.statsTarget = .worker(base: soFar.stats)
    }

    /// The round's totals recorded; another round while items are pending in a run still running. Items other
    /// workers hold (or held, when they died) come free when their leases run out.
    func anotherRound(_ run: JoinedRun, soFar: ReconciliationPipeline.Result, work: PostgresConnection) throws -> Bool {
        let records = WorkerRecords(connection: work)
        try records.recordRounds(runId: run.id, workerId: workerId, written: soFar.written, stats: soFar.stats)
        let (pending, status) = try records.pendingAndStatus(runId: run.id)
        if pending == 0 || status != .running { return false }
        var logger = runner.logger
        label(&logger)
        let strays = try WorkerLease.coverStrays(runId: run.id, work)
        if strays > 0 {
            logger.warning("\(strays) pending items were in no unfinished chunk: they have one now")
            return true
        }
        logger.info("\(pending) items pending in chunks other workers hold: looking again in a second")
        Thread.sleep(forTimeInterval: min(1, settings.heartbeatSeconds))
        return true
    }

    /// A worker that could not go on leaves its items to the others when its leases run out.
    func abandon(_ run: JoinedRun, after error: any Error, control: PostgresConnection) {}

    func signalNotice(_ signal: String, run: JoinedRun) -> String {
        "received \(signal): finishing requests in flight, then leaving the run to the others"
    }
}
