import Foundation
import Postgres

/// The statements of a worker run (docs/architecture.md, "Workers") on `run_workers` (each worker's registration,
/// heartbeat, share of the rate limits, results and requests) and the worker run's heartbeat on its row in
/// `reconciliation_runs`; and the reads a starting worker finds its run with. Each runs on the connection given,
/// inside the caller's transaction when there is one. The chunks a worker leases are `WorkerLease`'s.
struct WorkerRecords {
    let connection: PostgresConnection

    /// What one heartbeat found: the run's status and how many workers are live.
    struct Beat: Sendable {
        /// `reconciliation_runs.status`, nil when the run is gone.
        let runStatus: RunStatus?
        let liveWorkers: Int
    }

    /// The latest worker run still running (the one a starting worker joins), if any.
    func running() throws -> StoredRun? {
        try connection.queryFirst(
            """
            SELECT \(StoredRun.columns) FROM reconciliation_runs
             WHERE status = 'running' AND (parameters->>'workers')::boolean IS TRUE
             ORDER BY id DESC LIMIT 1
            """
        ).map(StoredRun.init(row:))
    }

    /// The latest completed worker run whose as-of instant (its start, or its `--now`) lies within `seconds` of
    /// `asOf`, if any.
    func completed(near asOf: Date, seconds: Double) throws -> StoredRun? {
        try connection.queryFirst(
            """
            SELECT \(StoredRun.columns) FROM reconciliation_runs
             WHERE status = 'completed' AND (parameters->>'workers')::boolean IS TRUE
               AND as_of > $1::timestamptz - make_interval(secs => $2)
               AND as_of < $1::timestamptz + make_interval(secs => $2)
             ORDER BY id DESC LIMIT 1
            """,
            [asOf, seconds]
        ).map(StoredRun.init(row:))
    }

    /// Registers worker `workerId` in run `runId`.
    func register(runId: Int64, workerId: String, hostname: String, pid: Int64) throws {
        try connection.execute(
            "INSERT INTO run_workers (run_id, worker_id, hostname, pid) VALUES ($1, $2, $3, $4)",
            [runId, workerId, hostname, pid]
        )
    }

    /// The worker's results written and requests made after a round of its pipeline (its finished rounds in all).
    func recordRounds(runId: Int64, workerId: String, written: Int, stats: AppleRequestStats) throws {
        try connection.execute(
            "UPDATE run_workers SET written = $3, apple_stats = $4::jsonb WHERE run_id = $1 AND worker_id = $2",
            [runId, workerId, Int64(written), stats.jsonString()]
        )
    }

    /// The worker left the run: the others no longer count it live.
    func stop(runId: Int64, workerId: String) throws {
        try connection.execute(
            "UPDATE run_workers SET stopped_at = now() WHERE run_id = $1 AND worker_id = $2",
            [runId, workerId]
        )
    }

    /// Every worker's requests to Apple in the run, a killed one's up to its last heartbeat.
    func appleStats(runId: Int64) throws -> [AppleRequestStats] {
        try connection.query("SELECT apple_stats::text AS s FROM run_workers WHERE run_id = $1", [runId]).map {
            AppleRequestStats.fromJSON(try $0.decode("s", as: String?.self))
        }
    }

    /// How many other live workers of the run (not stopped, a heartbeat younger than `leaseSeconds`) have
    /// recorded no share, or one larger than `share`.
    func othersAboveShare(runId: Int64, workerId: String, leaseSeconds: Double, share: Double) throws -> Int? {
        try connection.queryFirst(
            """
            SELECT count(*) AS n FROM run_workers
             WHERE run_id = $1 AND worker_id <> $2 AND stopped_at IS NULL
               AND heartbeat_at > now() - make_interval(secs => $3) AND (share IS NULL OR share > $4 + 1e-9)
            """,
            [runId, workerId, leaseSeconds, share]
        )?.decode("n", as: Int.self)
    }

    /// The run's heartbeat, by one of its workers; returns the run's status and its live workers: those not stopped
    /// whose heartbeat is younger than `leaseSeconds`, and `workerId` whatever its last recorded heartbeat (after
    /// a preparation, or a database outage, longer than the lease, every worker's recorded heartbeat is old, and
    /// each counting only the others would take the whole limit).
    func beatRun(runId: Int64, workerId: String, leaseSeconds: Double) throws -> Beat {
        let row = try connection.queryFirst(
            """
            UPDATE reconciliation_runs SET heartbeat_at = now() WHERE id = $1
            RETURNING status,
                      (SELECT count(*) FROM run_workers w
                        WHERE w.run_id = $1 AND w.stopped_at IS NULL
                          AND (w.worker_id = $3 OR w.heartbeat_at > now() - make_interval(secs => $2))) AS live
            """,
            [runId, leaseSeconds, workerId]
        )
        return Beat(
            runStatus: try row.map { RunStatus(rawValue: try $0.decode("status", as: String.self)) } ?? nil,
            liveWorkers: try row?.decode("live") ?? 1
        )
    }

    /// The worker's heartbeat with its share and its results written and requests made so far (`progress`, nil:
    /// none yet): `runs` shows each worker's progress during the run, and a worker killed mid-run still counts in
    /// the run's statistics. Never fewer than already recorded (the worker's own write at the end of a round may
    /// have landed first).
    func beatWorker(
        runId: Int64,
        workerId: String,
        share: Double,
        progress: (written: Int, stats: AppleRequestStats)?
    ) throws {
        try connection.execute(
            """
            UPDATE run_workers SET heartbeat_at = now(), share = $3,
                   written = GREATEST(written, COALESCE($5, 0)),
                   apple_stats = CASE WHEN ($4::jsonb->>'requests')::bigint
                                           >= COALESCE((apple_stats->>'requests')::bigint, 0)
                                      THEN $4::jsonb ELSE apple_stats END
             WHERE run_id = $1 AND worker_id = $2
            """,
            [runId, workerId, share, progress?.stats.jsonString(), progress.map { Int32(clamping: $0.written) }]
        )
    }

    /// The run's pending items and its status (nil when the run is gone), read together.
    func pendingAndStatus(runId: Int64) throws -> (pending: Int, runStatus: RunStatus?) {
        let left = try connection.queryFirst(
            """
            SELECT (SELECT count(*) FROM reconciliation_items WHERE run_id = $1 AND status = 'pending') AS pending,
                   (SELECT status FROM reconciliation_runs WHERE id = $1) AS status
            """,
            [runId]
        )
        let status = try left?.decode("status", as: String?.self).flatMap(RunStatus.init(rawValue:))
        return (try left?.decode("pending") ?? 0, status)
    }
}
