import Foundation
import Postgres

/// Reads everything one run's report needs from PostgreSQL, in one read-only, repeatable-read
/// transaction (a consistent snapshot even while another run writes).
///
/// Only the tables `reconciliation_runs`, `reconciliation_items`, `subscription_transactions`,
/// `dry_run_transactions`, `products` and `app_store_notifications` are read (of the ledger, never
/// `signed_transaction`): never `subscriptions`, so no receipt is ever loaded.
public struct ReportLoader {
    public let connection: PostgresConnection

    public init(connection: PostgresConnection) {
        self.connection = connection
    }

    /// Loads run `runId` into memory (every item and transaction: for tests and small runs; the report
    /// generator streams instead, see `ReportGenerator`).
    /// - Throws: `ReportError` (`.runNotFound`, or `.database` with the failing step).
    public func load(runId: Int64) throws(ReportError) -> ReportData {
        do {
            return try connection.transaction { db in
                let (run, schema) = try Self.beginSnapshot(db, runId: runId)
                var items: [ReportItem] = []
                try Self.forEachItem(db, runId: runId, schema: schema) { items.append($0) }
                var transactions: [ReportTransaction] = []
                try Self.forEachTransaction(db, run: run, schema: schema) { transactions.append($0) }
                let prices = try Self.prices(db, hasCatalog: schema.hasCatalog)
                return ReportData(
                    run: run,
                    items: items,
                    transactions: transactions,
                    prices: prices,
                    notifications: try Self.notifications(db, runId: runId, schema: schema)
                )
            }
        } catch let error as ReportError {
            throw error
        } catch {
            throw ReportError(.database, "reading run \(runId): \(error)")
        }
    }

    // MARK: Streaming (inside a transaction on `db`)

    /// Makes the current transaction a repeatable-read, read-only snapshot (must be its first statement)
    /// and reads the run and which optional tables exist (migrations 002 and 004).
    static func beginSnapshot(_ db: PostgresConnection, runId: Int64) throws -> (ReportRun, ReportSchema) {
        _ = try db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        guard let runRow = try db.queryFirst(runSQL, [runId]) else {
            throw ReportError(.runNotFound, "run \(runId) not found in reconciliation_runs")
        }
        let run = try Self.run(runRow)
        let tables = try db.queryFirst(tablesSQL)
        let schema = ReportSchema(
            hasCatalog: try tables?.decode("has_catalog", as: Bool.self) ?? false,
            hasServerAPI: try tables?.decode("has_server_api", as: Bool.self) ?? false
        )
        return (run, schema)
    }

    /// Streams the run's items, ordered by original transaction id then subscription id (byte order,
    /// as Swift compares strings), one row in memory at a time.
    static func forEachItem(
        _ db: PostgresConnection,
        runId: Int64,
        schema: ReportSchema,
        _ body: (ReportItem) throws -> Void
    ) throws {
        let sql =
            schema.hasCatalog
            ? itemsSQL(serverAPI: schema.hasServerAPI) : itemsWithoutDryRunsSQL(serverAPI: schema.hasServerAPI)
        try db.forEachRow(sql, [runId]) { try body(try item($0)) }
    }

    /// Streams the run's ledger transactions (a dry run's would-be ones), ordered by purchase date
    /// (missing first) then transaction id.
    static func forEachTransaction(
        _ db: PostgresConnection,
        run: ReportRun,
        schema: ReportSchema,
        _ body: (ReportTransaction) throws -> Void
    ) throws {
        if run.dryRun && !schema.hasCatalog { return }
        let sql =
            run.dryRun
            ? dryRunTransactionsSQL(serverAPI: schema.hasServerAPI) : transactionsSQL(serverAPI: schema.hasServerAPI)
        try db.forEachRow(sql, [run.id]) { try body(try transaction($0)) }
    }

    /// The notifications first seen in run `runId` (none when the table of migration 004 does not exist).
    static func notifications(
        _ db: PostgresConnection,
        runId: Int64,
        schema: ReportSchema
    ) throws
        -> ReportNotifications
    {
        guard schema.hasServerAPI else { return ReportNotifications() }
        var byType: [String: Int] = [:]
        for row in try db.query(notificationTypesSQL, [runId]) {
            byType[try row.decode("notification_type", as: String.self)] = try row.decode("n", as: Int.self)
        }
        let unknown = try db.query(unknownSubscriptionsSQL, [runId]).map {
            try $0.decode("original_transaction_id", as: String.self)
        }
        return ReportNotifications(byType: byType, unknownSubscriptions: unknown)
    }

    /// The price catalog (small), empty when the table does not exist.
    static func prices(_ db: PostgresConnection, hasCatalog: Bool) throws -> [ProductPrice] {
        hasCatalog ? try db.query(pricesSQL).map(price) : []
    }

    // MARK: Rows

    static func run(_ row: PostgresRow) throws -> ReportRun {
        ReportRun(
            id: try row.decode("id"),
            mode: try row.decode("mode"),
            dryRun: try row.decode("dry_run"),
            status: try row.decode("status"),
            asOf: try row.decode("as_of"),
            startedAt: try row.decode("started_at"),
            finishedAt: try row.decode("finished_at"),
            dueCount: try row.decode("due_count"),
            doneCount: try row.decode("done_count"),
            unresolvedCount: try row.decode("unresolved_count"),
            exitCode: try row.decode("exit_code"),
            appleStats: AppleRequestStats.fromJSON(try row.decode("apple_stats", as: String?.self)),
            notDueRejected: try row.decode("not_due_rejected_count", as: Int?.self),
            notDueRejectedNext: try row.decode("not_due_rejected_next", as: Date?.self),
            sweepEligible: try row.decode("sweep_eligible_count", as: Int?.self),
            sweepQuota: try row.decode("sweep_quota", as: Int?.self)
        )
    }

    static func item(_ row: PostgresRow) throws -> ReportItem {
        ReportItem(
            subscriptionId: try row.decode("subscription_id"),
            originalTransactionId: try row.decode("original_transaction_id"),
            status: try row.decode("status"),
            outcome: try row.decode("outcome"),
            userId: try row.decode("user_id"),
            previousState: try row.decode("previous_state"),
            newState: try row.decode("new_state"),
            previousExpiresAt: try row.decode("previous_expires_at"),
            newExpiresAt: try row.decode("new_expires_at"),
            previousProductId: try row.decode("previous_product_id"),
            productId: try row.decode("product_id"),
            subscriptionGroupId: try row.decode("subscription_group_id"),
            autoRenew: try row.decode("auto_renew"),
            previousAutoRenew: try row.decode("previous_auto_renew"),
            autoRenewProductId: try row.decode("auto_renew_product_id"),
            environment: try row.decode("environment"),
            appleStatus: try row.decode("apple_status"),
            attempts: try row.decode("attempts"),
            reason: try row.decode("reason"),
            lastTransactionWasTrial: try row.decode("last_is_trial"),
            lastTransactionWasIntroOffer: try row.decode("last_is_intro"),
            expiryMovedBackwards: try row.decode("expiry_moved_backwards"),
            dueReason: try row.decode("due_reason")
        )
    }

    static func transaction(_ row: PostgresRow) throws -> ReportTransaction {
        ReportTransaction(
            transactionId: try row.decode("transaction_id"),
            originalTransactionId: try row.decode("original_transaction_id"),
            productId: try row.decode("product_id"),
            subscriptionGroupId: try row.decode("subscription_group_id"),
            kind: try row.decode("kind"),
            purchaseDate: try row.decode("purchase_date"),
            expiresDate: try row.decode("expires_date"),
            isTrial: try row.decode("is_trial"),
            isIntroOffer: try row.decode("is_intro_offer"),
            offer: try row.decode("offer"),
            cancellationDate: try row.decode("cancellation_date"),
            cancellationReason: try row.decode("cancellation_reason"),
            firstSeenInRun: try row.decode("first_seen"),
            refundSeenInRun: try row.decode("refund_seen"),
            previousWasTrial: try row.decode("prev_trial"),
            previousWasIntroOffer: try row.decode("prev_intro"),
            priceMilliunits: try row.decode("price_milliunits"),
            currency: try row.decode("currency"),
            revocationType: try row.decode("revocation_type"),
            revocationPercentage: try row.decode("revocation_percentage"),
            isSandbox: try row.decode("sandbox")
        )
    }

    static func price(_ row: PostgresRow) throws -> ProductPrice {
        ProductPrice(
            productId: try row.decode("product_id"),
            currency: try row.decode("currency"),
            price: try row.decode("price"),
            period: try row.decode("period"),
            displayName: try row.decode("display_name")
        )
    }

    // MARK: SQL

    static let runSQL = """
        SELECT id, mode, dry_run, status, as_of, started_at, finished_at, due_count, done_count, unresolved_count,
               exit_code, apple_stats::text AS apple_stats,
               -- Migration 005's columns, NULL on a database without them.
               (to_jsonb(r) ->> 'not_due_rejected_count')::bigint AS not_due_rejected_count,
               (to_jsonb(r) ->> 'not_due_rejected_next')::timestamptz AS not_due_rejected_next,
               -- Migration 006's, likewise.
               (to_jsonb(r) ->> 'sweep_eligible_count')::bigint AS sweep_eligible_count,
               (to_jsonb(r) ->> 'sweep_quota')::bigint AS sweep_quota
          FROM reconciliation_runs r WHERE id = $1
        """

    /// Migrations 002 (products, dry_run_transactions) and 004 (ledger prices, app_store_notifications) may
    /// not be applied on an old database.
    static let tablesSQL = """
        SELECT to_regclass('products') IS NOT NULL AND to_regclass('dry_run_transactions') IS NOT NULL AS has_catalog,
               to_regclass('app_store_notifications') IS NOT NULL AS has_server_api
        """

    /// `due_reason` is migration 004's (NULL on an older database).
    static func itemColumns(serverAPI: Bool) -> String {
        """
        \(serverAPI ? "i.due_reason" : "NULL::text AS due_reason"), i.subscription_id, i.original_transaction_id, i.status, i.outcome, i.user_id, i.previous_state, i.new_state,
        i.previous_expires_at, i.new_expires_at, i.previous_product_id, i.product_id, i.subscription_group_id,
        i.auto_renew, i.previous_auto_renew, i.auto_renew_product_id, i.environment, i.apple_status, i.attempts,
        i.reason, COALESCE(last.is_trial, false) AS last_is_trial,
        COALESCE(last.is_intro_offer, false) AS last_is_intro, i.expiry_moved_backwards
        """
    }

    /// For lapsed items: was the subscription's last transaction (up to the new expiry) a trial or intro offer?
    static func itemsSQL(serverAPI: Bool) -> String {
        """
        SELECT \(itemColumns(serverAPI: serverAPI))
          FROM reconciliation_items i
          LEFT JOIN LATERAL (
                SELECT x.is_trial, x.is_intro_offer FROM (
                    SELECT s.is_trial, s.is_intro_offer, s.expires_date FROM subscription_transactions s
                     WHERE s.original_transaction_id = i.original_transaction_id AND s.kind <> 'refund'
                    UNION ALL
                    SELECT d.is_trial, d.is_intro_offer, d.expires_date FROM dry_run_transactions d
                     WHERE d.run_id = i.run_id AND d.original_transaction_id = i.original_transaction_id
                       AND d.kind <> 'refund'
                ) x
                 WHERE i.outcome = 'lapsed' AND (i.new_expires_at IS NULL OR x.expires_date <= i.new_expires_at)
                 ORDER BY x.expires_date DESC NULLS LAST LIMIT 1
          ) last ON true
         WHERE i.run_id = $1
         ORDER BY i.original_transaction_id COLLATE "C", i.subscription_id
        """
    }

    static func itemsWithoutDryRunsSQL(serverAPI: Bool) -> String {
        """
        SELECT \(itemColumns(serverAPI: serverAPI))
          FROM reconciliation_items i
          LEFT JOIN LATERAL (
                SELECT s.is_trial, s.is_intro_offer FROM subscription_transactions s
                 WHERE i.outcome = 'lapsed' AND s.original_transaction_id = i.original_transaction_id
                   AND s.kind <> 'refund' AND (i.new_expires_at IS NULL OR s.expires_date <= i.new_expires_at)
                 ORDER BY s.expires_date DESC NULLS LAST LIMIT 1
          ) last ON true
         WHERE i.run_id = $1
         ORDER BY i.original_transaction_id COLLATE "C", i.subscription_id
        """
    }

    static let transactionColumns = """
        t.transaction_id, t.original_transaction_id, t.product_id, t.subscription_group_id, t.kind, t.purchase_date,
        t.expires_date, t.is_trial, t.is_intro_offer, t.offer, t.cancellation_date, t.cancellation_reason,
        COALESCE(prev.is_trial, false) AS prev_trial, COALESCE(prev.is_intro_offer, false) AS prev_intro
        """

    /// The ledger prices of migration 004 (NULL on an older database).
    static func priceColumns(serverAPI: Bool) -> String {
        serverAPI
            ? "t.price_milliunits, t.currency, t.revocation_type, t.revocation_percentage"
            : """
            NULL::bigint AS price_milliunits, NULL::text AS currency, NULL::text AS revocation_type,
            NULL::bigint AS revocation_percentage
            """
    }

    /// Ledger rows first seen in the run, plus rows whose refund the run saw. `prev` is each row's previous
    /// transaction (the latest purchased strictly earlier in the same subscription), computed by one window
    /// over the ledgers the run touched, in the same pass that reads the rows: one sort, where a per-row
    /// lookup read a subscription's whole history for each of its transactions, and no join whose plan
    /// depends on statistics the run has just made stale (docs/architecture.md, "Database work per
    /// subscription"). A row without a purchase date has no previous transaction and is none.
    static func transactionsSQL(serverAPI: Bool) -> String {
        """
        SELECT \(transactionColumns), \(priceColumns(serverAPI: serverAPI)),
               COALESCE(t.environment = 'Sandbox', false) AS sandbox,
               t.first_seen_run_id IS NOT DISTINCT FROM $1 AS first_seen,
               t.refund_seen_run_id IS NOT DISTINCT FROM $1 AS refund_seen
          FROM (
                SELECT t.*,
                       CASE WHEN t.purchase_date IS NOT NULL THEN last_value(t.is_trial) OVER w END AS prev_is_trial,
                       CASE WHEN t.purchase_date IS NOT NULL THEN last_value(t.is_intro_offer) OVER w END
                           AS prev_is_intro_offer
                  FROM subscription_transactions t
                 WHERE t.original_transaction_id IN (
                           SELECT original_transaction_id FROM subscription_transactions
                            WHERE first_seen_run_id = $1 OR refund_seen_run_id = $1)
                WINDOW w AS (PARTITION BY t.original_transaction_id ORDER BY t.purchase_date
                             RANGE BETWEEN UNBOUNDED PRECEDING AND '1 microsecond' PRECEDING)
          ) t
          CROSS JOIN LATERAL (SELECT t.prev_is_trial AS is_trial, t.prev_is_intro_offer AS is_intro_offer) prev
         WHERE t.first_seen_run_id = $1 OR t.refund_seen_run_id = $1
         ORDER BY t.purchase_date NULLS FIRST, t.transaction_id COLLATE "C"
        """
    }

    /// A dry run's would-be ledger entries; a refund counts as "seen", a transaction as new unless the
    /// ledger already holds it.
    static func dryRunTransactionsSQL(serverAPI: Bool) -> String {
        """
        SELECT \(transactionColumns), \(priceColumns(serverAPI: serverAPI)),
               COALESCE((SELECT i.environment = 'Sandbox' FROM reconciliation_items i
                           JOIN subscriptions s ON s.id = i.subscription_id
                          WHERE i.run_id = t.run_id AND s.original_transaction_id = t.original_transaction_id
                          LIMIT 1), false) AS sandbox,
               NOT EXISTS (SELECT 1 FROM subscription_transactions l WHERE l.transaction_id = t.transaction_id)
                   AS first_seen,
               t.kind = 'refund' AS refund_seen
          FROM dry_run_transactions t
          LEFT JOIN LATERAL (
                SELECT x.is_trial, x.is_intro_offer FROM (
                    SELECT p.is_trial, p.is_intro_offer, p.purchase_date FROM subscription_transactions p
                     WHERE p.original_transaction_id = t.original_transaction_id
                       AND p.transaction_id <> t.transaction_id AND p.purchase_date < t.purchase_date
                    UNION ALL
                    SELECT q.is_trial, q.is_intro_offer, q.purchase_date FROM dry_run_transactions q
                     WHERE q.run_id = t.run_id AND q.original_transaction_id = t.original_transaction_id
                       AND q.transaction_id <> t.transaction_id AND q.purchase_date < t.purchase_date
                ) x
                 ORDER BY x.purchase_date DESC LIMIT 1
          ) prev ON true
         WHERE t.run_id = $1
         ORDER BY t.purchase_date NULLS FIRST, t.transaction_id COLLATE "C"
        """
    }

    static let notificationTypesSQL = """
        SELECT notification_type, count(*)::bigint AS n FROM app_store_notifications
         WHERE first_seen_run_id = $1 GROUP BY notification_type
        """

    static let unknownSubscriptionsSQL = """
        SELECT DISTINCT original_transaction_id COLLATE "C" AS original_transaction_id FROM app_store_notifications
         WHERE first_seen_run_id = $1 AND NOT subscription_known AND original_transaction_id IS NOT NULL
         ORDER BY 1
        """

    static let pricesSQL = """
        SELECT product_id, currency, price::text AS price, period, display_name FROM products
         ORDER BY product_id, currency
        """
}
