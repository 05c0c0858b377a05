import CivilTime
import Foundation
import Postgres

/// The workers of runs (`renewal-reconciler runs`, docs/operations.md "Several workers"): who worked on a run, on
/// which host, how many results each wrote, its share of the rate limits when it last looked, and whether it is
/// live, left on its own, or went silent (died).
public struct WorkerListing {
    public let connection: PostgresConnection

    public init(connection: PostgresConnection) {
        self.connection = connection
    }

    /// One line per worker of the runs `runIds`, newest run first; empty when none had workers (or the schema
    /// predates them).
    public func lines(runIds: [Int64], leaseSeconds: Double = WorkerSettings().leaseSeconds) throws -> [String] {
        let exists = try connection.queryFirst("SELECT to_regclass('run_workers') IS NOT NULL AS e")?
            .decode("e", as: Bool.self)
        guard exists == true, !runIds.isEmpty else { return [] }
        let rows = try connection.query(
            """
            SELECT run_id, worker_id, written, share, started_at, heartbeat_at,
                   CASE WHEN stopped_at IS NOT NULL THEN 'left'
                        WHEN heartbeat_at < now() - make_interval(secs => $2) THEN 'silent'
                        ELSE 'live' END AS state
              FROM run_workers WHERE run_id = ANY($1::bigint[])
             ORDER BY run_id DESC, started_at, worker_id
            """,
            [runIds.map { Optional($0) }, leaseSeconds]
        )
        return try rows.map { row in
            let run: Int64 = try row.decode("run_id")
            let worker: String = try row.decode("worker_id")
            let written: Int = try row.decode("written")
            let share: Double? = try row.decode("share")
            let state: String = try row.decode("state")
            let heartbeat: Date = try row.decode("heartbeat_at")
            let shareText = share.map { String(format: "%.0f%%", $0 * 100) } ?? "-"
            return "run \(run) worker \(worker): \(state), \(written) results written, share \(shareText), "
                + "last heartbeat \(RFC3339.string(heartbeat))"
        }
    }
}
