import Foundation
import Postgres

/// One worker's hold on the items it works on (docs/architecture.md, "Workers"): items are claimed in batches
/// with `FOR UPDATE SKIP LOCKED`, each leased to the worker until `now() + seconds`; the worker's heartbeat renews
/// the leases of its pending items, and a worker that dies loses them when they run out, so another one takes
/// them. A result is written only while its item is still pending and leased to this worker.
public final class WorkerLease: @unchecked Sendable {
    /// `hostname:pid:random`, unique per worker process.
    public let workerId: String
    /// How long a claimed item stays this worker's without a heartbeat.
    public let seconds: Double
    private let lock = NSLock()
    private var lost = 0

    public init(workerId: String, seconds: Double) {
        self.workerId = workerId
        self.seconds = seconds
    }

    /// Claims up to `limit` pending items of the run that nobody holds (never leased, or their lease ran out),
    /// lowest ids first, skipping rows other workers are claiming this instant. Returns their subscription ids.
    func claim(runId: Int64, limit: Int, _ conn: PostgresConnection) throws -> [Int64] {
        try conn.query(
            """
            WITH free AS (
                SELECT run_id, subscription_id FROM reconciliation_items
                 WHERE run_id = $1 AND status = 'pending' AND (lease_until IS NULL OR lease_until < now())
                 ORDER BY subscription_id LIMIT $2
                 FOR UPDATE SKIP LOCKED)
            UPDATE reconciliation_items AS i
               SET leased_by = $3, lease_until = now() + make_interval(secs => $4)
              FROM free WHERE i.run_id = free.run_id AND i.subscription_id = free.subscription_id
            RETURNING i.subscription_id
            """,
            [runId, Int64(limit), workerId, seconds]
        ).map { try $0.decode("subscription_id", as: Int64.self) }
    }

    /// Of `ids`, the items still pending and leased to this worker, locked until the caller's transaction ends
    /// (so no other worker can claim them while the batch is written).
    func owned(runId: Int64, _ ids: [Int64], _ conn: PostgresConnection) throws -> Set<Int64> {
        guard !ids.isEmpty else { return [] }
        return Set(
            try conn.query(
                """
                SELECT subscription_id FROM reconciliation_items
                 WHERE run_id = $1 AND subscription_id = ANY($2::bigint[]) AND status = 'pending' AND leased_by = $3
                 FOR UPDATE
                """,
                [runId, ids.map { Optional($0) }, workerId]
            ).map { try $0.decode("subscription_id", as: Int64.self) }
        )
    }

    /// Extends the leases of this worker's pending items (the heartbeat).
    func renew(runId: Int64, _ conn: PostgresConnection) throws {
        try conn.execute(
            """
            UPDATE reconciliation_items SET lease_until = now() + make_interval(secs => $3)
             WHERE run_id = $1 AND leased_by = $2 AND status = 'pending'
            """,
            [runId, workerId, seconds]
        )
    }

    /// Gives back this worker's pending items at once (a graceful stop): another worker need not wait for the
    /// leases to run out.
    func release(runId: Int64, _ conn: PostgresConnection) throws {
        try conn.execute(
            """
            UPDATE reconciliation_items SET leased_by = NULL, lease_until = NULL
             WHERE run_id = $1 AND leased_by = $2 AND status = 'pending'
            """,
            [runId, workerId]
        )
    }

    func lostResults(_ count: Int) {
        lock.lock()
        lost += count
        lock.unlock()
    }

    /// Results not written because their item's lease had gone to another worker.
    public var lostResultCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return lost
    }
}
