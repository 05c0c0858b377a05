import Foundation
import Postgres

/// The statements that write a run's row, `reconciliation_runs` (docs/architecture.md, "The stages of a run, and
/// where each lives"): creating, resuming, the heartbeat, marking dead runs interrupted, failing and finishing it;
/// and the reads a run is taken up and summed up with. Each runs on the connection given, inside the caller's
/// transaction when there is one. A batch's counters are `RunStore`'s, the scan's cursor `ScanCursors`'s and a
/// worker run's heartbeat `WorkerRecords`'s.
struct RunRecords {
    let connection: PostgresConnection

    /// A run left with items undone: its progress and last heartbeat.
    struct Unfinished: Sendable {
        let id: Int64
        let done: Int
        let due: Int
        let lastHeartbeat: Date

        init(row: PostgresRow) throws {
            id = try row.decode("id")
            done = try row.decode("done_count")
            due = try row.decode("due_count")
            lastHeartbeat = try row.decode("heartbeat_at")
        }
    }

    /// How a run ends, as `finish` stores it.
    struct Ending: Sendable {
        var status: RunStatus
        var exitCode: ReconcilerExitCode
        var message: String?
        var stats: AppleRequestStats
        var items: ItemCounts
    }

    /// A run's items so far: done (by outcome) and pending.
    struct ItemCounts: Sendable {
        var outcomes: [ItemOutcome: Int] = [:]
        var done = 0
        var pending = 0

        var unresolved: Int { outcomes[.unresolved, default: 0] }
        var due: Int { done + pending }
    }

    /// The run running now, as a run that could not take the run lock names it.
    struct Holder: Sendable {
        let id: Int64
        let mode: String
        let hostname: String?
        let pid: Int?
        let startedAt: Date
    }

    /// A run as it stands, for a process that did not finish it.
    struct Standing: Sendable {
        let status: RunStatus?
        let exitCode: Int?
        let error: String?
        let due: Int
        let done: Int
        let pending: Int
        let stats: AppleRequestStats
    }

    /// The latest run still `running`, if any.
    func latestRunning() throws -> Holder? {
        guard
            let holder = try connection.queryFirst(
                """
                SELECT id, mode, hostname, pid, started_at FROM reconciliation_runs
                 WHERE status = 'running' ORDER BY id DESC LIMIT 1
                """
            )
        else { return nil }
        return Holder(
            id: try holder.decode("id"),
            mode: try holder.decode("mode"),
            hostname: try holder.decode("hostname"),
            pid: try holder.decode("pid"),
            startedAt: try holder.decode("started_at")
        )
    }

    /// The Apple source stored with the run `--resume [id]` would finish (`id` nil: the latest interrupted or
    /// failed run); nil when none is stored or there is no such run.
    func storedSource(resume id: Int64?) throws -> String? {
        let row = try connection.queryFirst(
            """
            SELECT parameters->>'source' AS source FROM reconciliation_runs
             WHERE ($1::bigint IS NULL AND status IN ('interrupted', 'failed')) OR id = $1
             ORDER BY id DESC LIMIT 1
            """,
            [id]
        )
        return try row?.decode("source", as: String?.self)
    }

    /// What a one-process run holds of its run row (`RunOwnership`), read right after the run was created or
    /// resumed, while the process holds the run lock.
    func ownership(runId: Int64) throws -> RunOwnership {
        let row = try connection.queryFirst(
            "SELECT resume_count, apple_stats::text AS stats FROM reconciliation_runs WHERE id = $1",
            [runId]
        )
        return RunOwnership(
            resumeCount: try row?.decode("resume_count", as: Int64.self) ?? 0,
            statsBase: AppleRequestStats.fromJSON(try row?.decode("stats", as: String?.self))
        )
    }

    /// Runs left `running` by a dead process become `interrupted` (the caller holds the run lock, so nobody else is
    /// running); returns them.
    func markDeadInterrupted() throws -> [Unfinished] {
        try connection.query(
            """
            UPDATE reconciliation_runs SET status = 'interrupted', finished_at = heartbeat_at,
                   error = COALESCE(error, 'process stopped without finishing (last heartbeat ' || heartbeat_at || ')')
             WHERE status = 'running'
            RETURNING id, done_count, due_count, heartbeat_at
            """
        ).map(Unfinished.init(row:))
    }

    /// The latest interrupted run with items undone (a new run says how to finish it instead), if any.
    func latestUnfinishedInterrupted() throws -> Unfinished? {
        try connection.queryFirst(
            """
            SELECT id, done_count, due_count, heartbeat_at FROM reconciliation_runs
             WHERE status = 'interrupted' AND done_count < due_count ORDER BY id DESC LIMIT 1
            """
        ).map(Unfinished.init(row:))
    }

    /// Run `id`, nil when there is no such run.
    func run(id: Int64) throws -> StoredRun? {
        try connection.queryFirst("SELECT \(StoredRun.columns) FROM reconciliation_runs WHERE id = $1", [id])
            .map(StoredRun.init(row:))
    }

    /// The run `run --resume` without an id finishes: the latest interrupted or failed run, or partial run with
    /// pending items.
    func latestResumable() throws -> StoredRun? {
        try connection.queryFirst(
            """
            SELECT \(StoredRun.columns) FROM reconciliation_runs r
             WHERE status IN ('interrupted', 'failed')
                OR (status = 'partial' AND EXISTS (
                      SELECT 1 FROM reconciliation_items i WHERE i.run_id = r.id AND i.status = 'pending'))
             ORDER BY id DESC LIMIT 1
            """
        ).map(StoredRun.init(row:))
    }

    /// Takes run `id` up again in this process: `running`, its resume count one more (which fences every batch
    /// of the process that had it, docs/architecture.md, "The run lock"), its end cleared.
    func resume(id: Int64, hostname: String, pid: Int64) throws {
        try connection.execute(
            """
            UPDATE reconciliation_runs SET status = 'running', resume_count = resume_count + 1, heartbeat_at = now(),
                   finished_at = NULL, exit_code = NULL, error = NULL, hostname = $2, pid = $3
             WHERE id = $1
            """,
            [id, hostname, pid]
        )
    }

    /// Creates a `running` run row and returns its id.
    func create(
        mode: ReconciliationRunner.Mode,
        dryRun: Bool,
        asOf: Date,
        parameters: RunParameters,
        hostname: String,
        pid: Int64
    ) throws -> Int64 {
        let row = try connection.queryFirst(
            """
            INSERT INTO reconciliation_runs (mode, dry_run, status, as_of, parameters, hostname, pid, period_start,
                                             period_previous_run_id)
            SELECT v.mode, v.dry_run, 'running', v.as_of, v.parameters, v.hostname, v.pid,
                   COALESCE(prev.as_of, \(ReportPeriod.calendarDaySQL("v.as_of"))), prev.id
              FROM (VALUES ($1::text, $2::boolean, $3::timestamptz, $4::jsonb, $5::text, $6::integer))
                   AS v(mode, dry_run, as_of, parameters, hostname, pid)
              -- The report's period (docs/reports.md, "The period"): since the previous completed run.
              LEFT JOIN LATERAL (\(ReportPeriod.previousRunSQL(mode: "v.mode", asOf: "v.as_of"))) prev ON true
            RETURNING id
            """,
            [mode.rawValue, dryRun, asOf, try parameters.jsonString(), hostname, pid]
        )
        guard let id: Int64 = try row?.decode("id") else {
            throw PostgresError(code: .query, message: "creating the run row returned no id")
        }
        return id
    }

    /// The heartbeat of a one-process run.
    func heartbeat(runId: Int64) throws {
        try connection.execute("UPDATE reconciliation_runs SET heartbeat_at = now() WHERE id = $1", [runId])
    }

    /// A one-process run that cannot go on: `failed` with the error (redacted, at most 1,000 characters), only
    /// while it is still this process's (`running` with the resume count it took the run with).
    func fail(runId: Int64, exitCode: ReconcilerExitCode, error: String, resumeCount: Int64) throws {
        try connection.execute(
            """
            UPDATE reconciliation_runs SET status = 'failed', finished_at = now(), exit_code = $2, error = $3
             WHERE id = $1 AND status = 'running' AND resume_count = $4
            """,
            [runId, Int64(exitCode.rawValue), Self.stored(error), resumeCount]
        )
    }

    /// A finished run (completed or partial) whose report could not be written: `failed` with the reason
    /// (redacted, at most 1,000 characters).
    func failReport(runId: Int64, exitCode: ReconcilerExitCode, error: String) throws {
        try connection.execute(
            """
            UPDATE reconciliation_runs SET status = 'failed', exit_code = $2, error = $3
             WHERE id = $1 AND status IN ('completed', 'partial')
            """,
            [runId, Int64(exitCode.rawValue), Self.stored(error)]
        )
    }

    /// Ends the run as `ending` says. Only a run still running is finished, and by one process (with
    /// `resumeCount`, only while the run is still the one this process took); returns false, writing nothing, when
    /// it was not.
    func finish(runId: Int64, _ ending: Ending, resumeCount: Int64?) throws -> Bool {
        let finished = try connection.queryFirst(
            """
            UPDATE reconciliation_runs
               SET status = $2, finished_at = now(), heartbeat_at = now(), exit_code = $3, error = $4,
                   apple_stats = $5::jsonb, done_count = $6, unresolved_count = $7, due_count = $8
             WHERE id = $1 AND status = 'running' AND ($9::bigint IS NULL OR resume_count = $9)
            RETURNING id
            """,
            [
                runId, ending.status.rawValue, Int64(ending.exitCode.rawValue), ending.message,
                ending.stats.jsonString(), Int64(ending.items.done), Int64(ending.items.unresolved),
                Int64(ending.items.due),
                resumeCount,
            ]
        )
        return finished != nil
    }

    /// Adds `count` items made due after the scan (notification history) to the run's due count.
    func addDue(runId: Int64, count: Int) throws {
        try connection.execute(
            "UPDATE reconciliation_runs SET due_count = due_count + $2 WHERE id = $1",
            [runId, Int64(count)]
        )
    }

    /// The run's items by status and outcome.
    func itemCounts(runId: Int64) throws -> ItemCounts {
        let rows = try connection.query(
            """
            SELECT status, COALESCE(outcome, '') AS outcome, count(*) AS n
              FROM reconciliation_items WHERE run_id = $1 GROUP BY status, outcome
            """,
            [runId]
        )
        var counts = ItemCounts()
        for row in rows {
            let n: Int = try row.decode("n")
            if try ItemStatus.stored(row.decode("status")) == .done {
                counts.done += n
                let stored: String = try row.decode("outcome")
                guard let outcome = ItemOutcome(rawValue: stored) else {
                    throw UnknownStoredValueError(column: "reconciliation_items.outcome", value: stored)
                }
                counts.outcomes[outcome, default: 0] += n
            } else {
                counts.pending += n
            }
        }
        return counts
    }

    /// The run's row as it stands, with its pending items; nil when there is no such run.
    func standing(runId: Int64) throws -> Standing? {
        guard
            let row = try connection.queryFirst(
                """
                SELECT r.status, r.exit_code, r.error, r.due_count, r.done_count, r.apple_stats::text AS stats,
                       (SELECT count(*) FROM reconciliation_items i WHERE i.run_id = r.id AND i.status = 'pending') AS pending
                  FROM reconciliation_runs r WHERE r.id = $1
                """,
                [runId]
            )
        else { return nil }
        return Standing(
            status: RunStatus(rawValue: try row.decode("status", as: String.self)),
            exitCode: try row.decode("exit_code", as: Int?.self),
            error: try row.decode("error"),
            due: try row.decode("due_count"),
            done: try row.decode("done_count"),
            pending: try row.decode("pending"),
            stats: AppleRequestStats.fromJSON(try row.decode("stats", as: String?.self))
        )
    }

    /// The run's status, nil when there is no such run.
    func status(runId: Int64) throws -> RunStatus? {
        let row = try connection.queryFirst("SELECT status FROM reconciliation_runs WHERE id = $1", [runId])
        return try row.map { RunStatus(rawValue: try $0.decode("status", as: String.self)) } ?? nil
    }

    /// The run's resume count (0 when the run is gone).
    func resumeCount(runId: Int64) throws -> Int64 {
        try connection.queryFirst("SELECT resume_count FROM reconciliation_runs WHERE id = $1", [runId])?
            .decode("resume_count") ?? 0
    }

    /// An error as stored on the run row: redacted, at most 1,000 characters.
    private static func stored(_ error: String) -> String {
        String(Redactor.shared.redact(error).prefix(1000))
    }
}
