import CivilTime
import Foundation
import Logging
import Postgres

/// How a worker ends (docs/architecture.md, "Workers"): it leaves the run to the others, or, finding nothing pending
/// (or a stop that ends the whole run), completes it once under the run's finish lock.
extension WorkerCoordination {
    func finish(_ ending: RunRoundsEnding) throws -> (ReconciliationRunner.Summary, writesReports: Bool) {
        let (run, work, logger) = (ending.run, ending.work, ending.logger)
        if lease.lostResultCount > 0 {
            logger.warning(
                "\(lease.lostResultCount) results not written: their leases had gone to another worker (its result is kept)"
            )
        }
        // Leaving on a signal (or Apple unreachable, or a database failure only this worker saw): give the items back
        // at once and let the others finish. A configuration error (or refused TLS) ends the whole run.
        let endsRun: Bool
        switch ending.total.stopReason {
        case .configuration?, .tlsRefused?: endsRun = true
        case .interrupted?, .appleUnreachable?, .database?: endsRun = false
        case nil: endsRun = ending.stopRequested == nil
        }
        if !endsRun {
            try? lease.release(runId: run.id, work)
            // The others raise their share once this worker is marked stopped: first let its last sends leave the
            // one-second window Apple counts them in (a slot is held at most 1.05 s, "The send window").
            Thread.sleep(forTimeInterval: 1.1)
        }
        try WorkerRecords(connection: work).stop(runId: run.id, workerId: workerId)
        guard endsRun else {
            var summary = try runSummary(runId: run.id, parameters: run.parameters, asOf: run.asOf, connection: work)
            if ending.runEndedElsewhere, ending.stopRequested == nil, summary.status != .running {
                // Completed by another worker (this one's chunks had gone to the others), or failed for all: this
                // worker exits as the run did, like one that finds it completed at the end of its rounds.
                logger.notice("worker \(workerId) stopped: run \(run.id) ended elsewhere (\(summary.status))")
                return (summary, false)
            }
            let why = ending.total.stopReason.map { "\($0)" } ?? ending.stopRequested ?? "stopped"
            logger.notice("worker \(workerId) left run \(run.id) (\(why)): the other workers finish it")
            summary.exitCode =
                ending.total.stopReason == nil && ending.stopRequested == nil ? .success : .failure
            return (summary, false)
        }
        return try complete(ending)
    }

    /// Completing the run: once, by the first worker to get here with nothing pending (or to stop it).
    private func complete(_ ending: RunRoundsEnding) throws -> (ReconciliationRunner.Summary, writesReports: Bool) {
        let (run, work) = (ending.run, ending.work)
        try Self.lockRun(Self.finishLockClass, run.id, ending.control)
        defer { try? Self.unlockRun(Self.finishLockClass, run.id, ending.control) }
        guard try RunRecords(connection: work).status(runId: run.id) == .running else {
            return (try runSummary(runId: run.id, parameters: run.parameters, asOf: run.asOf, connection: work), false)
        }
        // Every worker's requests, a killed one's up to its last heartbeat; the workers ran side by side, so the run
        // took as long as the longest of them, not their sum.
        var stats = AppleRequestStats()
        var longest = 0.0
        for workerStats in try WorkerRecords(connection: work).appleStats(runId: run.id) {
            longest = max(longest, workerStats.elapsedSeconds)
            stats.merge(workerStats)
        }
        stats.elapsedSeconds = longest
        stats.achievedRate = longest > 0 ? Double(stats.requests) / longest : 0
        do {
            return (try runner.finishRun(ending, stats: stats, fence: nil), true)
        } catch let error as RunFinishedElsewhereError {
            // The finish lock is a session lock: a database restart drops it, and another worker may have taken it.
            ending.logger.notice("\(error)")
            return (try runSummary(runId: run.id, parameters: run.parameters, asOf: run.asOf, connection: work), false)
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
    func completedWithinJoinWindow(_ db: PostgresConnection, asOf: Date) throws -> StoredRun? {
        guard settings.joinWindowSeconds > 0 else { return nil }
        return try WorkerRecords(connection: db).completed(near: asOf, seconds: settings.joinWindowSeconds)
    }

    /// A worker that came after the night's worker run completed: it says which run that was and exits 0.
    func nothingToDo(_ run: StoredRun, _ control: PostgresConnection) throws -> ReconciliationRunner.Summary {
        runner.logger.notice(
            """
            worker run \(run.id), started \(RFC3339.string(run.startedAt)), has completed within --join-window: \
            nothing to do (--join-window 0 starts a new run)
            """
        )
        return try runSummary(runId: run.id, parameters: try run.parameters(), asOf: run.asOf, connection: control)
    }

    /// The run as it stands, for a worker that did not complete it.
    func runSummary(
        runId: Int64,
        parameters: RunParameters,
        asOf: Date,
        connection: PostgresConnection
    ) throws -> ReconciliationRunner.Summary {
        let run = try RunRecords(connection: connection).standing(runId: runId)
        let code = run?.exitCode.flatMap { ReconcilerExitCode(rawValue: Int32($0)) }
        return ReconciliationRunner.Summary(
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

    /// Waits until every other live worker of the run has recorded a share no larger than this one's (they lowered
    /// it at a heartbeat), at most a lease timeout: a worker silent that long is no longer counted live.
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

    /// One heartbeat: this worker's registration and leases renewed, the run's heartbeat, and its share of the rate
    /// limits (1 / the live workers: those whose heartbeat is younger than the lease and who did not leave).
    static func beat(
        _ conn: PostgresConnection,
        runId: Int64,
        lease: WorkerLease,
        settings: WorkerSettings,
        progress: (written: Int, stats: AppleRequestStats)? = nil
    ) throws -> (share: Double, runStatus: RunStatus?) {
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
