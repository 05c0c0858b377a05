import Foundation
import Postgres

/// The outbox's delivery statements (docs/events.md, "Delivery"): lease the events that may go now, mark each one
/// delivered or failed, replay dead ones.
///
/// An event may go when it is pending, its retry time has come, no deliverer holds its lease, and every earlier
/// event of its subscription was delivered: a subscription's next event waits for the previous one (a dead one
/// holds the rest back until it is replayed). Leases are taken with `FOR UPDATE SKIP LOCKED`, so deliverers on
/// several hosts never take one event at once; a deliverer killed while holding one leaves it to the next once
/// the lease runs out (at least once: the receiver may see it twice, with the same id).
public struct EventDeliveryStore: Sendable {
    /// When a failed event is tried again: `firstRetry` after the first failure, doubling, at most `maxRetryDelay`;
    /// dead after `maxAttempts` failures.
    public struct RetryPolicy: Sendable {
        public var firstRetry: TimeInterval
        public var maxRetryDelay: TimeInterval
        public var maxAttempts: Int

        public init(firstRetry: TimeInterval = 30, maxRetryDelay: TimeInterval = 3600, maxAttempts: Int = 20) {
            self.firstRetry = firstRetry
            self.maxRetryDelay = maxRetryDelay
            self.maxAttempts = maxAttempts
        }
    }

    public let connection: PostgresConnection
    public let owner: String
    public let policy: RetryPolicy

    public init(connection: PostgresConnection, owner: String, policy: RetryPolicy) {
        self.connection = connection
        self.owner = owner
        self.policy = policy
    }

    /// Leases up to `limit` events that may go now, for `lease` seconds, oldest first.
    public func claim(limit: Int, lease: TimeInterval) throws -> [EventPayload] {
        try connection.query(
            """
            UPDATE subscription_events e SET lease_owner = $1, lease_until = now() + make_interval(secs => $2)
             WHERE e.id IN (
                   SELECT h.id FROM subscription_events h
                    WHERE h.delivery_status = 'pending'
                      AND (h.next_attempt_at IS NULL OR h.next_attempt_at <= now())
                      AND (h.lease_until IS NULL OR h.lease_until < now())
                      AND NOT EXISTS (SELECT 1 FROM subscription_events p
                                       WHERE p.subscription_id = h.subscription_id AND p.sequence < h.sequence
                                         AND p.delivery_status <> 'delivered')
                    ORDER BY h.id LIMIT $3
                      FOR UPDATE SKIP LOCKED)
            RETURNING \(EventPayload.columns)
            """,
            [owner, lease, Int64(limit)]
        ).map(EventPayload.init(row:)).sorted { $0.id < $1.id }
    }

    /// The receiver took it (2xx).
    public func delivered(_ id: Int64) throws {
        try connection.execute(
            """
            UPDATE subscription_events
               SET delivery_status = 'delivered', delivered_at = now(), delivery_attempts = delivery_attempts + 1,
                   lease_owner = NULL, lease_until = NULL, last_delivery_error = NULL, next_attempt_at = NULL
             WHERE id = $1 AND delivery_status = 'pending'
            """,
            [id]
        )
    }

    /// It failed (`error`, never a secret): tried again after the policy's delay, or dead after its last attempt.
    /// Returns true when it is dead now.
    @discardableResult
    public func failed(_ id: Int64, error: String) throws -> Bool {
        let row = try connection.queryFirst(
            """
            UPDATE subscription_events
               SET delivery_attempts = delivery_attempts + 1,
                   delivery_status = CASE WHEN delivery_attempts + 1 >= $3 THEN 'dead' ELSE 'pending' END,
                   next_attempt_at = now() + make_interval(secs => LEAST($5, $4 * power(2, delivery_attempts))),
                   last_delivery_error = left($2, 500), lease_owner = NULL, lease_until = NULL
             WHERE id = $1 AND delivery_status = 'pending'
            RETURNING delivery_status
            """,
            [id, error, Int64(policy.maxAttempts), policy.firstRetry, policy.maxRetryDelay]
        )
        return try row?.decode("delivery_status", as: String.self) == "dead"
    }

    /// Dead events made pending again with a fresh count (all, or one subscription's); returns how many.
    public func replay(subscriptionId: Int64?) throws -> Int {
        try connection.query(
            """
            UPDATE subscription_events
               SET delivery_status = 'pending', delivery_attempts = 0, next_attempt_at = NULL,
                   last_delivery_error = NULL
             WHERE delivery_status = 'dead' AND ($1::bigint IS NULL OR subscription_id = $1)
            RETURNING id
            """,
            [subscriptionId]
        ).count
    }

    /// Events pending and dead now.
    public func backlog() throws -> (pending: Int, dead: Int) {
        let row = try connection.queryFirst(
            """
            SELECT count(*) FILTER (WHERE delivery_status = 'pending') AS pending,
                   count(*) FILTER (WHERE delivery_status = 'dead') AS dead
              FROM subscription_events WHERE delivery_status <> 'delivered'
            """
        )
        return (try row?.decode("pending", as: Int.self) ?? 0, try row?.decode("dead", as: Int.self) ?? 0)
    }
}
