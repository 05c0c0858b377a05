import Foundation
import Postgres
import ReceiptDomain

/// The database side of notifications, shared by the history reader and the import: store each
/// notification once (`notification_uuid` is Apple's key), make the subscriptions named by new ones due in
/// a run, and claim imported notifications for the next run (docs/architecture.md, "Notification
/// history"). Every function runs on the connection it is given, inside the caller's transaction.
enum NotificationStore {
    /// What storing a group of notifications did.
    struct Stored {
        /// The notifications inserted now (the others were stored before).
        var inserted: [VerifiedNotification] = []
        /// Original transaction ids of inserted notifications the subscriptions table does not have.
        var unknownSubscriptions: [String] = []
    }

    /// Inserts the notifications `ON CONFLICT (notification_uuid) DO NOTHING`; `subscription_known` says
    /// whether `subscriptions` has the row now.
    static func insert(
        _ notifications: [VerifiedNotification],
        source: String,
        runId: Int64?,
        _ conn: PostgresConnection
    ) throws -> Stored {
        var stored = Stored()
        for n in notifications {
            let row = try conn.queryFirst(
                """
                INSERT INTO app_store_notifications
                       (notification_uuid, notification_type, subtype, environment, bundle_id, original_transaction_id,
                        transaction_id, signed_date, signed_payload, source, subscription_known, first_seen_run_id,
                        product_id)
                VALUES ($1, $2, $3, $4, $5, $6::text, $7, $8, $9, $10,
                        $6::text IS NOT NULL AND EXISTS (SELECT 1 FROM subscriptions WHERE original_transaction_id = $6::text),
                        $11, $12)
                ON CONFLICT (notification_uuid) DO NOTHING
                RETURNING subscription_known
                """,
                [
                    n.notificationUUID, n.notificationType, n.subtype, n.environment, n.bundleId,
                    n.originalTransactionId, n.transactionId, n.signedDate, n.signedPayload, source, runId,
                    n.productId,
                ]
            )
            guard let row else { continue }
            stored.inserted.append(n)
            if let otid = n.originalTransactionId, try !row.decode("subscription_known", as: Bool.self) {
                stored.unknownSubscriptions.append(otid)
            }
        }
        try LedgerWriter(runId: runId).insert(try oneTimePurchases(stored.inserted, conn), conn)
        return stored
    }

    /// The one-time purchases `notifications` carry, as ledger rows with the notification's environment. Each
    /// transaction's row comes from the notification Apple signed last (its ONE_TIME_CHARGE, then its REFUND), and
    /// only when no stored notification about it is newer: one read out of order (an import) never turns a refunded
    /// purchase back.
    static func oneTimePurchases(
        _ notifications: [VerifiedNotification],
        _ conn: PostgresConnection
    ) throws -> [LedgerWriter.Row] {
        var latest: [String: VerifiedNotification] = [:]
        var order: [String] = []
        for n in notifications {
            guard let id = n.oneTimePurchase?.transactionId else { continue }
            if let seen = latest[id], (n.signedDate ?? .distantPast) < (seen.signedDate ?? .distantPast) { continue }
            if latest[id] == nil { order.append(id) }
            latest[id] = n
        }
        guard !order.isEmpty else { return [] }
        var stored: [String: Date] = [:]
        let rows = try conn.query(
            """
            SELECT transaction_id, max(signed_date) AS newest FROM app_store_notifications
             WHERE transaction_id = ANY($1::text[]) GROUP BY transaction_id
            """,
            [order.map { Optional($0) }]
        )
        for row in rows {
            if let date = try row.decode("newest", as: Date?.self) {
                stored[try row.decode("transaction_id", as: String.self)] = date
            }
        }
        return order.compactMap { id in
            guard let n = latest[id], let entry = n.oneTimePurchase else { return nil }
            if let newest = stored[id], let date = n.signedDate, date < newest { return nil }
            return LedgerWriter.Row(
                environment: n.environment.flatMap(AppleEnvironment.init(appleValue:)),
                entry: entry
            )
        }
    }

    /// The uuids among `uuids` already stored.
    static func existing(_ uuids: [String], _ conn: PostgresConnection) throws -> Set<String> {
        guard !uuids.isEmpty else { return [] }
        let rows = try conn.query(
            "SELECT notification_uuid FROM app_store_notifications WHERE notification_uuid = ANY($1::text[])",
            [uuids.map { Optional($0) }]
        )
        return Set(try rows.map { try $0.decode("notification_uuid", as: String.self) })
    }

    /// The ids among `originalTransactionIds` with no subscription row.
    static func unknown(_ originalTransactionIds: [String], _ conn: PostgresConnection) throws -> [String] {
        let ids = Array(Set(originalTransactionIds)).sorted()
        guard !ids.isEmpty else { return [] }
        let rows = try conn.query(
            "SELECT original_transaction_id FROM subscriptions WHERE original_transaction_id = ANY($1::text[])",
            [ids.map { Optional($0) }]
        )
        let known = Set(try rows.map { try $0.decode("original_transaction_id", as: String.self) })
        return ids.filter { !known.contains($0) }
    }

    /// Makes the subscriptions with these original transaction ids due in run `runId` (`due_reason`
    /// `notification`, whatever their expiry), copying the columns the scan copies; an item already in the
    /// run and still pending gets the reason too, a finished one is left alone. Bumps the run's `due_count`
    /// by the items inserted; returns that number.
    static func makeDue(_ originalTransactionIds: [String], runId: Int64, _ conn: PostgresConnection) throws -> Int {
        let ids = Array(Set(originalTransactionIds)).sorted()
        guard !ids.isEmpty else { return 0 }
        let row = try conn.queryFirst(
            """
            WITH named AS (
                SELECT id, original_transaction_id, user_id, state, expires_at, product_id, auto_renew,
                       subscription_group_id
                  FROM subscriptions
                 WHERE original_transaction_id = ANY($2::text[])
            ), upserted AS (
                INSERT INTO reconciliation_items (run_id, subscription_id, original_transaction_id, user_id,
                                                  previous_state, previous_expires_at, previous_product_id,
                                                  previous_auto_renew, subscription_group_id, due_reason)
                SELECT $1, id, original_transaction_id, user_id, state, expires_at, product_id, auto_renew,
                       subscription_group_id, 'notification'
                  FROM named
                ON CONFLICT (run_id, subscription_id) DO UPDATE SET due_reason = 'notification'
                 WHERE reconciliation_items.status = 'pending'
                RETURNING (xmax = 0) AS inserted
            )
            SELECT count(*) FILTER (WHERE inserted) AS inserted FROM upserted
            """,
            [runId, ids.map { Optional($0) }]
        )
        let inserted: Int = try row?.decode("inserted") ?? 0
        if inserted > 0 {
            try RunRecords(connection: conn).addDue(runId: runId, count: inserted)
        }
        return inserted
    }

    /// Makes due again, in run `runId`, the subscriptions a notification named in an earlier run (within the last
    /// 30 days, then the sweep takes over) that no run has verified since that run's as-of: their item ended
    /// `unresolved` or the run stopped before it, and Apple announces a change only once (docs/architecture.md,
    /// "Notification history"). Returns how many items were added.
    static func makeDueAgain(runId: Int64, asOf: Date, _ conn: PostgresConnection) throws -> Int {
        let ids = try conn.query(
            """
            SELECT DISTINCT n.original_transaction_id
              FROM app_store_notifications n
              JOIN reconciliation_runs r ON r.id = n.first_seen_run_id
              JOIN subscriptions s ON s.original_transaction_id = n.original_transaction_id
              LEFT JOIN subscription_checks c ON c.subscription_id = s.id
             WHERE n.first_seen_run_id <> $1 AND NOT r.dry_run
               AND r.as_of > $2::timestamptz - interval '30 days' AND r.as_of <= $2::timestamptz
               AND (c.last_verified_at IS NULL OR c.last_verified_at < r.as_of)
            """,
            [runId, asOf]
        ).map { try $0.decode("original_transaction_id", as: String.self) }
        return try makeDue(ids, runId: runId, conn)
    }

    /// Makes due in run `runId` the subscriptions a mass renewal-date extension first seen in it covers
    /// (`RENEWAL_EXTENSION`, whose `summary` names a product, not subscriptions): the rows of that product and app
    /// that are entitled now (active, grace period, billing retry), whose expiry Apple may have moved. A superset of
    /// the storefronts Apple names costs a request each, never a wrong row. Returns how many items were added.
    static func makeExtendedDue(runId: Int64, _ conn: PostgresConnection) throws -> Int {
        let ids = try conn.query(
            """
            SELECT DISTINCT s.original_transaction_id
              FROM app_store_notifications n
              JOIN subscriptions s ON s.product_id = n.product_id
             WHERE n.first_seen_run_id = $1 AND n.notification_type = 'RENEWAL_EXTENSION'
               AND (n.bundle_id IS NULL OR s.bundle_id IS NULL OR s.bundle_id = n.bundle_id)
               AND s.state IN ('active', 'grace_period', 'billing_retry')
            """,
            [runId]
        ).map { try $0.decode("original_transaction_id", as: String.self) }
        return try makeDue(ids, runId: runId, conn)
    }

    /// Imported notifications no run has acted on yet (`first_seen_run_id` NULL) become this run's: their
    /// subscriptions are made due and `subscription_known` is set as of now. With `dryRun`, the
    /// subscriptions are made due but the notifications stay unclaimed. Returns (claimed, made due, unknown).
    static func claimUnseen(
        runId: Int64,
        dryRun: Bool,
        _ conn: PostgresConnection
    ) throws -> (claimed: Int, madeDue: Int, unknown: [String]) {
        let rows: [PostgresRow]
        if dryRun {
            rows = try conn.query(
                "SELECT original_transaction_id FROM app_store_notifications WHERE first_seen_run_id IS NULL"
            )
        } else {
            // The one-time purchases an import put in the ledger become this run's too (its report counts them).
            rows = try conn.query(
                """
                WITH claimed AS (
                    UPDATE app_store_notifications n
                       SET first_seen_run_id = $1,
                           subscription_known = n.original_transaction_id IS NOT NULL
                               AND EXISTS (SELECT 1 FROM subscriptions s
                                            WHERE s.original_transaction_id = n.original_transaction_id)
                     WHERE first_seen_run_id IS NULL
                    RETURNING original_transaction_id, transaction_id
                ), ledger AS (
                    UPDATE subscription_transactions t
                       SET first_seen_run_id = $1,
                           refund_seen_run_id = CASE WHEN t.kind = 'refund' THEN $1 ELSE t.refund_seen_run_id END
                     WHERE t.first_seen_run_id IS NULL AND t.kind IN ('one_time', 'refund')
                       AND t.transaction_id IN (SELECT transaction_id FROM claimed)
                )
                SELECT original_transaction_id FROM claimed
                """,
                [runId]
            )
        }
        let ids = try rows.compactMap { try $0.decode("original_transaction_id", as: String?.self) }
        let madeDue = try makeDue(ids, runId: runId, conn)
        return (rows.count, madeDue, try unknown(ids, conn))
    }
}
