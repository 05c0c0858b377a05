import Foundation
import Postgres

/// Reads everything one run's report needs from PostgreSQL, in one read-only, repeatable-read
/// transaction (a consistent snapshot even while another run writes).
///
/// Only the tables `reconciliation_runs`, `reconciliation_items`, `subscription_transactions`,
/// `dry_run_transactions`, `products` and `app_store_notifications` are read (of the ledger, never
/// `signed_transaction`), and of `subscriptions` only the `currency` the app stored (migration 011), so no
/// receipt is ever loaded.
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
                let prices = try Self.prices(db, schema: schema)
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
    public static func beginSnapshot(_ db: PostgresConnection, runId: Int64) throws -> (ReportRun, ReportSchema) {
        _ = try db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        guard let runRow = try db.queryFirst(runsSQL("WHERE r.id = $1"), [runId]) else {
            throw ReportError(.runNotFound, "run \(runId) not found in reconciliation_runs")
        }
        let run = try Self.run(runRow)
        let tables = try db.queryFirst(tablesSQL)
        let schema = ReportSchema(
            hasCatalog: try tables?.decode("has_catalog", as: Bool.self) ?? false,
            hasServerAPI: try tables?.decode("has_server_api", as: Bool.self) ?? false,
            hasCatalogPrices: try tables?.decode("has_catalog_prices", as: Bool.self) ?? false,
            hasCustomerFacts: try tables?.decode("has_customer_facts", as: Bool.self) ?? false
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
            schema.hasCatalog ? itemsSQL(schema) : itemsWithoutDryRunsSQL(schema)
        try db.forEachRow(sql, [runId]) { try body(try item($0)) }
    }

    /// Streams the run's ledger transactions (a dry run's would-be ones), each subscription's together: ordered by
    /// original transaction id, then purchase date (missing last) and transaction id: those purchased or refunded in its period, and those it saw first
    /// (history found, or dated after its as-of), each with where it counts (`PeriodScope`).
    static func forEachTransaction(
        _ db: PostgresConnection,
        run: ReportRun,
        schema: ReportSchema,
        _ body: (ReportTransaction) throws -> Void
    ) throws {
        if run.dryRun && !schema.hasCatalog { return }
        let sql =
            run.dryRun
            ? dryRunTransactionsSQL(
                serverAPI: schema.hasServerAPI,
                catalogPrices: schema.hasCatalogPrices,
                offerType: schema.hasCustomerFacts
            )
            : transactionsSQL(serverAPI: schema.hasServerAPI, catalogPrices: schema.hasCatalogPrices)
        let start = run.periodStart ?? run.asOf
        let parameters: [(any PostgresEncodable)?] =
            run.dryRun ? [run.id, start, run.asOf] : [run.id, start, run.asOf, run.periodScanFromRunId]
        try db.forEachRow(sql, parameters) { try body(try transaction($0)) }
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
        let requests = try db.query(refundRequestsSQL, [runId]).map { row in
            ReportRefundRequest(
                transactionId: try row.decode("transaction_id", as: String?.self) ?? "",
                originalTransactionId: try row.decode("original_transaction_id"),
                requestedAt: try row.decode("signed_date", as: Date.self),
                outcome: ReportRefundRequest.Outcome(rawValue: try row.decode("outcome", as: String.self)) ?? .open
            )
        }
        return ReportNotifications(byType: byType, unknownSubscriptions: unknown, refundRequests: requests)
    }

    /// The price catalog (small), empty when the table does not exist.
    public static func prices(_ db: PostgresConnection, schema: ReportSchema) throws -> [ProductPrice] {
        schema.hasCatalog ? try db.query(pricesSQL(introPrice: schema.hasCatalogPrices)).map(price) : []
    }

    // MARK: Rows

    static func run(_ row: PostgresRow) throws -> ReportRun {
        var run = ReportRun(
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
            sweepQuota: try row.decode("sweep_quota", as: Int?.self),
            periodStart: try row.decode("period_start", as: Date?.self),
            periodPreviousRunId: try row.decode("period_previous_run_id", as: Int64?.self),
            periodScanFromRunId: try row.decode("period_scan_from", as: Int64.self)
        )
        run.itemsPrunedAt = try row.decode("items_pruned_at", as: Date?.self)
        if let apps = try row.decode("configured_apps", as: String?.self) {
            run.configuredApps = (try? JSONDecoder().decode([String].self, from: Data(apps.utf8))) ?? []
        }
        return run
    }

    static func item(_ row: PostgresRow) throws -> ReportItem {
        ReportItem(
            subscriptionId: try row.decode("subscription_id"),
            originalTransactionId: try row.decode("original_transaction_id"),
            status: try ItemStatus.stored(row.decode("status")),
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
            dueReason: try row.decode("due_reason"),
            bundleId: try row.decode("bundle_id"),
            expirationIntent: try row.decode("expiration_intent"),
            priceIncreaseStatus: try row.decode("price_increase_status")
        )
    }

    static func transaction(_ row: PostgresRow) throws -> ReportTransaction {
        var transaction = ReportTransaction(
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
            ownershipType: try row.decode("ownership_type"),
            firstSeenInRun: try row.decode("first_seen"),
            refundSeenInRun: try row.decode("refund_seen"),
            previousWasTrial: try row.decode("prev_trial"),
            previousWasIntroOffer: try row.decode("prev_intro"),
            priceMilliunits: try row.decode("price_milliunits"),
            currency: try row.decode("currency"),
            revocationType: try row.decode("revocation_type"),
            revocationPercentage: try row.decode("revocation_percentage"),
            isSandbox: try row.decode("sandbox"),
            purchaseScope: try row.decode("purchase_scope", as: String?.self).flatMap(PeriodScope.init(rawValue:)),
            refundScope: try row.decode("refund_scope", as: String?.self).flatMap(PeriodScope.init(rawValue:)),
            firstPaidDate: try row.decode("first_paid_date"),
            storefront: try row.decode("storefront"),
            subscriptionCurrency: try row.decode("subscription_currency")
        )
        transaction.offerType = try row.decode("offer_kind")
        transaction.previousOfferType = try row.decode("prev_offer_kind")
        return transaction
    }

    /// Ledger row `t`'s offer type: Apple's signed `offerType`, else (verifyReceipt rows) 1 for a trial or
    /// introductory offer and 0 for another offer, which verifyReceipt does not type; NULL without an offer.
    static func offerKindSQL(_ t: String, signedOfferType: Bool) -> String {
        let typed = signedOfferType ? "\(t).offer_type" : "NULL::integer"
        return """
            COALESCE(\(typed), CASE WHEN \(t).is_trial OR \(t).is_intro_offer THEN 1
                                    WHEN \(t).offer IS NOT NULL THEN 0 END)
            """
    }

    static func price(_ row: PostgresRow) throws -> ProductPrice {
        ProductPrice(
            productId: try row.decode("product_id"),
            currency: try row.decode("currency"),
            price: try row.decode("price"),
            period: try row.decode("period"),
            displayName: try row.decode("display_name"),
            introPrice: try row.decode("intro_price", as: String?.self).flatMap {
                Decimal(string: $0, locale: Locale(identifier: "en_US_POSIX"))
            }
        )
    }

    // MARK: SQL

    /// The run, and its period (docs/reports.md, "The period"): `period_start` and `period_previous_run_id` as
    /// the run stored them (migration 009), or computed the same way for an older run; `period_scan_from`, the
    /// smallest run id that can have first seen a transaction dated in the period (the previous run, or an older
    /// one that was still running after the previous run's as-of; 0 without a previous run). `filter` chooses the
    /// runs (`WHERE`, `ORDER BY`, `LIMIT` on `r`); every row is read by `run(_:)`.
    static func runsSQL(_ filter: String) -> String {
        """
        SELECT r.id, r.mode, r.dry_run, r.status, r.as_of, r.started_at, r.finished_at, r.due_count, r.done_count,
               r.unresolved_count, r.exit_code, r.apple_stats::text AS apple_stats,
               -- Migration 005's columns, NULL on a database without them.
               (to_jsonb(r) ->> 'not_due_rejected_count')::bigint AS not_due_rejected_count,
               (to_jsonb(r) ->> 'not_due_rejected_next')::timestamptz AS not_due_rejected_next,
               -- Migration 006's, likewise.
               (to_jsonb(r) ->> 'sweep_eligible_count')::bigint AS sweep_eligible_count,
               (to_jsonb(r) ->> 'sweep_quota')::bigint AS sweep_quota,
               -- Migration 020's, likewise.
               (to_jsonb(r) ->> 'items_pruned_at')::timestamptz AS items_pruned_at,
               -- The apps the run was configured for: the keys of --apps, else the one --bundle-id (JSON array).
               CASE WHEN jsonb_typeof(r.parameters -> 'apps') = 'object'
                    THEN (SELECT jsonb_agg(k) FROM jsonb_object_keys(r.parameters -> 'apps') AS k)::text
                    WHEN r.parameters ->> 'bundleId' IS NOT NULL THEN jsonb_build_array(r.parameters ->> 'bundleId')::text
               END AS configured_apps,
               COALESCE(stored.period_start, prev.as_of, \(ReportPeriod.calendarDaySQL("r.as_of"))) AS period_start,
               pp.id AS period_previous_run_id,
               COALESCE(LEAST(pp.id, (SELECT min(o.id) FROM reconciliation_runs o
                                       WHERE o.id < pp.id AND (o.finished_at IS NULL OR o.finished_at > pp.as_of))),
                        0) AS period_scan_from
          FROM reconciliation_runs r
          -- Migration 009's columns, NULL on a database without them (or a run from before it).
          CROSS JOIN LATERAL (
                SELECT (to_jsonb(r) ->> 'period_start')::timestamptz AS period_start,
                       (to_jsonb(r) ->> 'period_previous_run_id')::bigint AS previous_run_id
          ) stored
          LEFT JOIN LATERAL (\(ReportPeriod.previousRunSQL(mode: "r.mode", asOf: "r.as_of", beforeId: "r.id"))) prev ON true
          LEFT JOIN LATERAL (
                SELECT p.id, p.as_of FROM reconciliation_runs p
                 WHERE p.id = CASE WHEN stored.period_start IS NOT NULL THEN stored.previous_run_id ELSE prev.id END
          ) pp ON true
         \(filter)
        """
    }

    /// Migrations 002 (products, dry_run_transactions) and 004 (ledger prices, app_store_notifications) may
    /// not be applied on an old database.
    static let tablesSQL = """
        SELECT to_regclass('products') IS NOT NULL AND to_regclass('dry_run_transactions') IS NOT NULL AS has_catalog,
               to_regclass('app_store_notifications') IS NOT NULL AS has_server_api,
               EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('subscriptions') AND attname = 'currency'
                          AND NOT attisdropped) AS has_catalog_prices,
               EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('reconciliation_items')
                          AND attname = 'price_increase_status' AND NOT attisdropped) AS has_customer_facts
        """

    /// `due_reason` is migration 004's, the expiration intent and price-increase status 016's (NULL on an older
    /// database).
    static func itemColumns(_ schema: ReportSchema) -> String {
        let facts =
            schema.hasCustomerFacts
            ? "i.expiration_intent, i.price_increase_status"
            : "NULL::integer AS expiration_intent, NULL::integer AS price_increase_status"
        return """
            \(schema.hasServerAPI ? "i.due_reason" : "NULL::text AS due_reason"), \(facts), i.subscription_id, i.original_transaction_id, i.status, i.outcome, i.user_id, i.previous_state, i.new_state,
            i.previous_expires_at, i.new_expires_at, i.previous_product_id, i.product_id, i.subscription_group_id,
            i.auto_renew, i.previous_auto_renew, i.auto_renew_product_id, i.environment, i.apple_status, i.attempts,
            i.reason, COALESCE(last.is_trial, false) AS last_is_trial,
            COALESCE(last.is_intro_offer, false) AS last_is_intro, i.expiry_moved_backwards,
            (SELECT b.bundle_id FROM subscriptions b WHERE b.id = i.subscription_id) AS bundle_id
            """
    }

    /// For lapsed items: was the subscription's last transaction (up to the new expiry) a trial or intro offer?
    static func itemsSQL(_ schema: ReportSchema) -> String {
        """
        SELECT \(itemColumns(schema))
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

    static func itemsWithoutDryRunsSQL(_ schema: ReportSchema) -> String {
        """
        SELECT \(itemColumns(schema))
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
        t.ownership_type, COALESCE(prev.is_trial, false) AS prev_trial, COALESCE(prev.is_intro_offer, false) AS prev_intro
        """

    /// The ledger prices of migration 004 (NULL on an older database).
    static func priceColumns(serverAPI: Bool) -> String {
        serverAPI
            ? "t.price_milliunits, t.currency, t.revocation_type, t.revocation_percentage, t.storefront"
            : """
            NULL::bigint AS price_milliunits, NULL::text AS currency, NULL::text AS revocation_type,
            NULL::bigint AS revocation_percentage, NULL::text AS storefront
            """
    }

    /// Whether ledger row `t` is paid service: not a free trial, and not priced 0 (docs/reports.md, "Estimated
    /// proceeds"); verifyReceipt rows carry no price.
    static func paidServiceSQL(_ t: String, serverAPI: Bool) -> String {
        serverAPI ? "NOT \(t).is_trial AND COALESCE(\(t).price_milliunits, 1) > 0" : "NOT \(t).is_trial"
    }

    /// Where a row's purchase (`seen` = `first_seen_run_id`, `date` = `purchase_date`) or refund
    /// (`refund_seen_run_id`, `cancellation_date`) counts in run $1's report, whose period is ($2, $3] and whose
    /// transactions were first seen by runs $4 to $1 (docs/reports.md, "The period"): `period` when dated in the
    /// period (or undated and seen by the run), `history_found` when dated before it and seen by the run,
    /// `next_period` when dated after the as-of and seen by the run, else NULL.
    static func scopeSQL(seen: String, date: String) -> String {
        """
        CASE WHEN \(seen) IS NULL OR \(seen) > $1 OR \(seen) < $4 THEN NULL
             WHEN \(date) IS NULL THEN CASE WHEN \(seen) = $1 THEN 'period' END
             WHEN \(date) > $2 AND \(date) <= $3 THEN 'period'
             WHEN \(seen) <> $1 THEN NULL
             WHEN \(date) <= $2 THEN 'history_found'
             ELSE 'next_period' END
        """
    }

    /// Ledger rows purchased or refunded in the run's period (first seen by it or by a run since the previous
    /// one), plus rows it saw first that are dated outside the period. `prev` is each row's previous
    /// transaction (the latest purchased strictly earlier in the same subscription), computed by one window
    /// over the ledgers of those rows, in the same pass that reads the rows: no per-row lookup of a
    /// subscription's history, and no join whose plan depends on statistics the run has just made stale
    /// (docs/architecture.md, "Database work per subscription"). A row without a purchase date has no previous
    /// transaction and is none.
    ///
    /// The rows come out grouped by subscription (original transaction id, then purchase date and transaction id),
    /// the order the window already needs, so the night's ledger is never sorted as a whole: the subscriptions are
    /// found once (`k`, with the app's currency read once per subscription, not per row) and merge-joined with
    /// the ledger in `subscription_transactions_otid_idx` order; only each subscription's few rows are sorted
    /// (docs/reports.md, "Report files in detail"). Plan on PostgreSQL 15, a first night of 20,000 subscriptions and
    /// 119,109 ledger rows (`ReportReadPlanTests` asserts its shape):
    ///
    ///     Incremental Sort (presorted: original_transaction_id, purchase_date)
    ///       WindowAgg <- WindowAgg <- Incremental Sort (presorted: original_transaction_id)
    ///         <- Merge Join (k.original_transaction_id = t.original_transaction_id)
    ///              <- Index Scan using subscription_transactions_otid_idx on subscription_transactions t
    ///              <- Sort <- k: HashAggregate <- Seq Scan on subscription_transactions (the run's rows)
    ///                           SubPlan: Index Scan using subscriptions_original_transaction_id_key (per subscription)
    static func transactionsSQL(serverAPI: Bool, catalogPrices: Bool = false) -> String {
        let purchase = scopeSQL(seen: "t.first_seen_run_id", date: "t.purchase_date")
        let refund = scopeSQL(seen: "t.refund_seen_run_id", date: "t.cancellation_date")
        let unpriced = serverAPI ? "t.price_milliunits IS NULL" : "true"
        return """
            SELECT \(transactionColumns), \(priceColumns(serverAPI: serverAPI)), t.first_paid_date,
                   COALESCE(t.environment = 'Sandbox', false) AS sandbox,
                   t.first_seen_run_id IS NOT DISTINCT FROM $1 AS first_seen,
                   t.refund_seen_run_id IS NOT DISTINCT FROM $1 AS refund_seen,
                   t.purchase_scope, t.refund_scope, t.offer_kind, t.prev_offer_kind,
                   CASE WHEN \(unpriced) THEN t.key_currency END AS subscription_currency
              FROM (
                    SELECT t.*,
                           CASE WHEN t.purchase_date IS NOT NULL THEN last_value(t.is_trial) OVER w END AS prev_is_trial,
                           CASE WHEN t.purchase_date IS NOT NULL THEN last_value(t.is_intro_offer) OVER w END
                               AS prev_is_intro_offer,
                           CASE WHEN t.purchase_date IS NOT NULL THEN last_value(t.offer_kind) OVER w END
                               AS prev_offer_kind,
                           min(t.purchase_date) FILTER (WHERE \(paidServiceSQL("t", serverAPI: serverAPI)))
                               OVER (PARTITION BY t.original_transaction_id) AS first_paid_date
                      FROM (
                            SELECT t.*, k.key_currency, \(purchase) AS purchase_scope, \(refund) AS refund_scope,
                                   \(offerKindSQL("t", signedOfferType: serverAPI)) AS offer_kind
                              FROM (
                                    SELECT k.original_transaction_id,
                                           \(catalogPrices ? subscriptionCurrencyLookup("k") : "NULL::text") AS key_currency
                                      FROM (
                                            SELECT DISTINCT t.original_transaction_id FROM subscription_transactions t
                                             WHERE (t.first_seen_run_id BETWEEN $4 AND $1
                                                    OR t.refund_seen_run_id BETWEEN $4 AND $1)
                                               AND (\(purchase) IS NOT NULL OR \(refund) IS NOT NULL)) k
                                    OFFSET 0  -- kept a subquery: the currency is read once per subscription
                              ) k
                              JOIN subscription_transactions t ON t.original_transaction_id = k.original_transaction_id
                      ) t
                    WINDOW w AS (PARTITION BY t.original_transaction_id ORDER BY t.purchase_date
                                 RANGE BETWEEN UNBOUNDED PRECEDING AND '1 microsecond' PRECEDING)
              ) t
              CROSS JOIN LATERAL (SELECT t.prev_is_trial AS is_trial, t.prev_is_intro_offer AS is_intro_offer) prev
             WHERE t.purchase_scope IS NOT NULL OR t.refund_scope IS NOT NULL
             ORDER BY t.original_transaction_id, t.purchase_date, t.transaction_id COLLATE "C"
            """
    }

    /// A dry run's would-be ledger entries; a refund counts as "seen", a transaction as new unless the
    /// ledger already holds it.
    static func dryRunTransactionsSQL(serverAPI: Bool, catalogPrices: Bool = false, offerType: Bool = false) -> String {
        """
        SELECT \(transactionColumns), \(priceColumns(serverAPI: serverAPI)),
               (SELECT min(x.purchase_date) FROM (
                    SELECT p.purchase_date FROM subscription_transactions p
                     WHERE p.original_transaction_id = t.original_transaction_id
                       AND \(paidServiceSQL("p", serverAPI: serverAPI))
                    UNION ALL
                    SELECT q.purchase_date FROM dry_run_transactions q
                     WHERE q.run_id = t.run_id AND q.original_transaction_id = t.original_transaction_id
                       AND \(paidServiceSQL("q", serverAPI: serverAPI))
               ) x) AS first_paid_date,
               COALESCE((SELECT i.environment = 'Sandbox' FROM reconciliation_items i
                           JOIN subscriptions s ON s.id = i.subscription_id
                          WHERE i.run_id = t.run_id AND s.original_transaction_id = t.original_transaction_id
                          LIMIT 1), false) AS sandbox,
               NOT EXISTS (SELECT 1 FROM subscription_transactions l WHERE l.transaction_id = t.transaction_id)
                   AS first_seen,
               t.kind = 'refund' AS refund_seen,
               CASE WHEN EXISTS (SELECT 1 FROM subscription_transactions l WHERE l.transaction_id = t.transaction_id)
                    THEN NULL \(dryRunScope("t.purchase_date")) END AS purchase_scope,
               CASE WHEN t.kind <> 'refund' THEN NULL \(dryRunScope("t.cancellation_date")) END AS refund_scope,
               \(offerKindSQL("t", signedOfferType: offerType)) AS offer_kind, prev.offer_kind AS prev_offer_kind,
               \(subscriptionCurrencySQL("t", catalogPrices: catalogPrices, serverAPI: false))
          FROM dry_run_transactions t
          LEFT JOIN LATERAL (
                SELECT x.is_trial, x.is_intro_offer, x.offer_kind FROM (
                    SELECT p.is_trial, p.is_intro_offer, p.purchase_date,
                           \(offerKindSQL("p", signedOfferType: serverAPI)) AS offer_kind
                      FROM subscription_transactions p
                     WHERE p.original_transaction_id = t.original_transaction_id
                       AND p.transaction_id <> t.transaction_id AND p.purchase_date < t.purchase_date
                    UNION ALL
                    SELECT q.is_trial, q.is_intro_offer, q.purchase_date,
                           \(offerKindSQL("q", signedOfferType: offerType)) AS offer_kind
                      FROM dry_run_transactions q
                     WHERE q.run_id = t.run_id AND q.original_transaction_id = t.original_transaction_id
                       AND q.transaction_id <> t.transaction_id AND q.purchase_date < t.purchase_date
                ) x
                 ORDER BY x.purchase_date DESC LIMIT 1
          ) prev ON true
         WHERE t.run_id = $1
         ORDER BY t.original_transaction_id, t.purchase_date, t.transaction_id COLLATE "C"
        """
    }

    /// The rest of a dry run's scope CASE for a would-be row dated `date`, period ($2, $3].
    static func dryRunScope(_ date: String) -> String {
        """
        WHEN \(date) IS NULL OR (\(date) > $2 AND \(date) <= $3) THEN 'period'
        WHEN \(date) <= $2 THEN 'history_found' ELSE 'next_period'
        """
    }

    static let notificationTypesSQL = """
        SELECT notification_type, count(*)::bigint AS n FROM app_store_notifications
         WHERE first_seen_run_id = $1 GROUP BY notification_type
        """

    /// Refund requests first seen in the run, with the first refund or refusal notification for the same transaction
    /// signed after each (docs/reports.md, "Refund requests").
    static let refundRequestsSQL = """
        SELECT r.transaction_id, r.original_transaction_id, r.signed_date,
               COALESCE((SELECT CASE a.notification_type WHEN 'REFUND' THEN 'refunded' ELSE 'declined' END
                           FROM app_store_notifications a
                          WHERE a.transaction_id = r.transaction_id
                            AND a.notification_type IN ('REFUND', 'REFUND_DECLINED')
                            AND a.signed_date >= r.signed_date
                          ORDER BY a.signed_date LIMIT 1), 'open') AS outcome
          FROM app_store_notifications r
         WHERE r.first_seen_run_id = $1 AND r.notification_type = 'CONSUMPTION_REQUEST'
           AND r.transaction_id IS NOT NULL AND r.signed_date IS NOT NULL
         ORDER BY r.signed_date, r.transaction_id COLLATE "C"
        """

    static let unknownSubscriptionsSQL = """
        SELECT DISTINCT original_transaction_id COLLATE "C" AS original_transaction_id FROM app_store_notifications
         WHERE first_seen_run_id = $1 AND NOT subscription_known AND original_transaction_id IS NOT NULL
         ORDER BY 1
        """

    static func pricesSQL(introPrice: Bool) -> String {
        """
        SELECT product_id, currency, price::text AS price, period, display_name,
               \(introPrice ? "intro_price::text" : "NULL::text") AS intro_price
          FROM products
         ORDER BY product_id, currency
        """
    }

    /// The currency the app stored for the subscription of ledger row `t` (migration 011), read only for rows
    /// without a signed price (verifyReceipt): one probe of the unique index on `original_transaction_id`.
    static func subscriptionCurrencySQL(_ t: String, catalogPrices: Bool, serverAPI: Bool) -> String {
        guard catalogPrices else { return "NULL::text AS subscription_currency" }
        let unpriced = serverAPI ? "\(t).price_milliunits IS NULL" : "true"
        return "CASE WHEN \(unpriced) THEN \(subscriptionCurrencyLookup(t)) END AS subscription_currency"
    }

    /// The currency the app stored for the subscription of `row`'s `original_transaction_id` (migration 011).
    static func subscriptionCurrencyLookup(_ row: String) -> String {
        "(SELECT s.currency FROM subscriptions s WHERE s.original_transaction_id = \(row).original_transaction_id)"
    }
}
