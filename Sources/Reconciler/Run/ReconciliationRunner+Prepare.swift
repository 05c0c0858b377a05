import CivilTime
import Foundation
import Logging
import Postgres

/// Taking up a run: the error naming the run that holds the lock, dead runs marked interrupted, a new run created or
/// an interrupted one resumed.
extension ReconciliationRunner {
    /// The error of a run that could not take the run lock, naming the run that holds it.
    func lockedError(_ control: PostgresConnection) throws -> RunLockedError {
        let holder = try RunRecords(connection: control).latestRunning()
        let detail = holder.map {
            "\($0.mode), started \(RFC3339.string($0.startedAt)) on \($0.hostname ?? "?") pid \($0.pid.map(String.init) ?? "?")"
        }
        return RunLockedError(holderRunId: holder?.id, holderDetail: detail)
    }
    /// Runs left `running` by a dead process (we hold the lock, so nobody else is running) become `interrupted`.
    func markDeadRunsInterrupted(_ conn: PostgresConnection) throws {
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
            let status = run.status
            let pendingItems = try records.itemCounts(runId: id).pending
            guard status.isResumable(pendingItems: pendingItems) else {
                throw UsageError(
                    "--resume \(id): run \(id) is \(status); only interrupted or failed runs (or partial runs "
                        + "with pending items) can be resumed"
                        + (status == .completed || status == .partial
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
            bundleId: request.apps.count == 1 ? request.apps[0].bundleId : nil,
            fixedClock: request.now != nil,
            source: request.source,
            apps: request.appsFile == nil
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
}
