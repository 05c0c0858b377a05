/// The one set-based statement that computes a day's trend snapshot (docs/reports.md, "Trends across nights"): every row of
/// `trend_snapshots` for one snapshot date, per app, product and currency, from the runs' decided items, the
/// ledger (`subscription_transactions`) and the `products` catalog. Used by the nightly run and by
/// `report --trends --rebuild` alike, so a rebuilt day equals the recorded one while its data is unchanged.
///
/// Parameters: `$1` snapshot date, `$2` the day's run as-of, `$3` the previous as-of (the as-of of the newest
/// completed run of an earlier day, else midnight UTC of `$2`), `$4` the run id, `$5` the currencies whose minor
/// unit is not 2 places (JSON object, code -> places), `$6` `run` or `rebuild`.
///
/// Each subscription's decided state comes from `Source`: the carried state plus the unfolded runs' items (the night)
/// or every decided item (a rebuild); the rest of the statement is the same for both.
///
/// Plan of the history source (PostgreSQL 15, `EXPLAIN ANALYZE` with 50,000 subscriptions, 30 nightly runs, 195,000
/// items and 350,000 ledger rows: 1.9 s on a busy 2-core machine; a test asserts its shape; docs/reports.md,
/// "Trends across nights"). The carried source replaces the items' pass with a sequential scan of
/// `trend_subscription_state` and an index scan of each unfolded run's items (TrendCarriedStateTests):
///
///     Insert on trend_snapshots
///       CTE state:  Unique <- Sort <- Hash Join (i.run_id = r.id)
///                     <- Seq Scan on reconciliation_items i      (once: both sides, 385,000 rows)
///                     <- Hash <- runs (NOT dry_run, as_of <= side) x VALUES
///       CTE valued: Hash Left Join products <- Hash Left Join latest <- Hash Join subscriptions (Seq Scan)
///                   newest: HashAggregate <- Seq Scan on subscription_transactions (per original transaction)
///                   target: Hash Join (CTE Scan on state, newest)
///                   latest: Unique <- Sort <- Hash Join (original_transaction_id, purchase_date)
///                             <- CTE Scan on target, Seq Scan on subscription_transactions
///       CTE movement, totals: HashAggregate / GroupAggregate over valued
///         events: Nested Loop (state, Index Scan using subscription_transactions_otid_idx, window filter)
///                 SubPlan: the previous transaction of a renewal in the window (Bitmap Index Scan on
///                 subscription_transactions_otid_idx), only for the window's renewals
///
/// The items and the ledger are each read in one pass and hashed or sorted; the window's ledger rows are index
/// probes by `original_transaction_id`. Linear in the items read and the ledger rows; no statement per subscription.
enum TrendSnapshotSQL {
    /// Rounds a milliunit amount `expression` to the minor unit of the currency column `currency`.
    private static func minorUnits(_ expression: String, _ currency: String) -> String {
        """
        (round(\(expression) / power(10, greatest(0, 3 - COALESCE(($5::jsonb ->> \(currency))::int, 2)))::numeric)
               * power(10, greatest(0, 3 - COALESCE(($5::jsonb ->> \(currency))::int, 2)))::numeric)::bigint
        """
    }

    /// A window condition on a timestamp: after the previous as-of, up to and including the as-of.
    private static func inWindow(_ column: String) -> String {
        "(\(column) > $3::timestamptz AND \(column) <= $2::timestamptz)"
    }

    /// Where the statement finds each subscription's decided state.
    enum Source: Sendable {
        /// Every decided item of every non-dry run up to the as-of: `report --trends --rebuild`.
        case history
        /// The carried state (`trend_subscription_state`, kept by `TrendCarriedState`) plus the items of the runs
        /// not folded into it: the nightly run. The carried state must hold no run newer than the previous as-of.
        case carried
    }

    /// The columns of a decided item as the statement reads it (`r` a run, `i` its item): the subscription, the run
    /// and its as-of that order it, and what the snapshot values.
    static let decidedColumns = """
        i.subscription_id, r.id AS run_id, r.as_of, i.original_transaction_id, i.new_state AS state,
        COALESCE(i.product_id, i.previous_product_id) AS product_id, i.auto_renew, i.auto_renew_product_id,
        i.environment, i.renewal_price_milliunits, i.renewal_currency
        """

    /// An item the snapshot counts: finished with a decided state (rejected, unresolved and conflicting items left
    /// the subscription as it was).
    static let decidedFilter = """
        i.status = 'done' AND i.new_state IS NOT NULL
        AND i.outcome IN ('renewed', 'unchanged', 'lapsed', 'recovered', 'revoked', 'changed')
        """

    /// The non-dry runs up to `asOf` (an SQL expression) not folded into the carried state, or folded while in
    /// another status: their items are not in it yet.
    static func unfoldedRuns(upTo asOf: String) -> String {
        """
        SELECT r.id, r.as_of, r.status FROM reconciliation_runs r
         WHERE NOT r.dry_run AND r.as_of <= \(asOf)
           AND NOT EXISTS (SELECT 1 FROM trend_folded_runs f WHERE f.run_id = r.id AND f.status = r.status)
        """
    }

    /// The decided items of the runs `runs` (a subquery or CTE with `id` and `as_of`), in `decidedColumns`' names.
    /// Each run's items are read by its id (`reconciliation_items_pkey`, run_id first): a few runs out of many, so
    /// never a pass over the whole table, whatever the planner settings (a lateral join is only a nested loop).
    static func decidedItems(ofRuns runs: String) -> String {
        """
        SELECT \(decidedColumns)
          FROM \(runs) r
         CROSS JOIN LATERAL (
               SELECT * FROM reconciliation_items i WHERE i.run_id = r.id AND \(decidedFilter)
               OFFSET 0  -- kept a subquery: pulled up, it would be planned as a join over the whole table
               ) i
        """
    }

    /// The candidate rows of `source`, in `decidedColumns`' names.
    private static func candidates(_ source: Source) -> String {
        switch source {
        case .history:
            return """
                SELECT \(decidedColumns)
                  FROM reconciliation_runs r JOIN reconciliation_items i ON i.run_id = r.id
                 WHERE NOT r.dry_run AND r.as_of <= $2::timestamptz AND \(decidedFilter)
                """
        case .carried:
            return """
                SELECT subscription_id, run_id, run_as_of AS as_of, original_transaction_id, state, product_id,
                       auto_renew, auto_renew_product_id, environment, renewal_price_milliunits, renewal_currency
                  FROM trend_subscription_state
                UNION ALL
                \(decidedItems(ofRuns: "(\(unfoldedRuns(upTo: "$2::timestamptz")))"))
                """
        }
    }

    /// The statement, reading each subscription's state from `source`.
    static func insert(_ source: Source) -> String {
        statement.replacingOccurrences(of: candidatesPlaceholder, with: candidates(source))
    }

    private static let candidatesPlaceholder = "/* candidates */"

    /// The statement with `candidatesPlaceholder` where `insert` puts the source's candidate rows.
    private static let statement = """
        INSERT INTO trend_snapshots (
            snapshot_date, bundle_id, product_id, currency, run_id, as_of, previous_as_of,
            active, grace_period, billing_retry, in_trial, in_intro_offer,
            new_subscriptions, renewed, lapsed, churned, refunded, reactivated, trial_conversions,
            mrr_subscriptions, mrr_milliunits, mrr_new_milliunits, mrr_expansion_milliunits,
            mrr_contraction_milliunits, mrr_churn_milliunits, mrr_source, recorded_by)
        WITH sides (side, at) AS (VALUES (1, $2::timestamptz), (0, $3::timestamptz)),
        -- Every decided item that can be a subscription's newest as of the day's run (see `Source`).
        candidates AS (\(candidatesPlaceholder)),
        -- Each subscription's state as the reconciler last decided it, as of each side's time.
        state AS (
            SELECT DISTINCT ON (w.side, c.subscription_id)
                   w.side, w.at, c.subscription_id, c.original_transaction_id, c.state, c.product_id, c.auto_renew,
                   c.auto_renew_product_id, c.environment, c.renewal_price_milliunits, c.renewal_currency
              FROM sides w
              JOIN candidates c ON c.as_of <= w.at
             ORDER BY w.side, c.subscription_id, c.as_of DESC, c.run_id DESC
        ),
        -- The newest ledger transaction purchased by then: its price, currency, trial and offer. The ledger is
        -- read once: its newest purchase date per original transaction as of each side (one hashed pass), then
        -- that transaction by (original transaction, purchase date); the newest transaction id wins a tie.
        newest AS (
            SELECT original_transaction_id,
                   max(purchase_date) FILTER (WHERE purchase_date <= $2::timestamptz) AS at_now,
                   max(purchase_date) FILTER (WHERE purchase_date <= $3::timestamptz) AS at_before
              FROM subscription_transactions GROUP BY original_transaction_id
        ),
        target AS MATERIALIZED (
            SELECT st.side, st.subscription_id, st.original_transaction_id,
                   CASE st.side WHEN 1 THEN n.at_now ELSE n.at_before END AS purchase_date
              FROM state st JOIN newest n ON n.original_transaction_id = st.original_transaction_id
        ),
        latest AS (
            SELECT DISTINCT ON (x.side, x.subscription_id)
                   x.side, x.subscription_id, t.price_milliunits, t.currency, t.environment, t.is_trial,
                   t.is_intro_offer, t.purchase_date, t.expires_date, t.ownership_type
              FROM target x
              JOIN subscription_transactions t
                ON t.original_transaction_id = x.original_transaction_id AND t.purchase_date = x.purchase_date
             ORDER BY x.side, x.subscription_id, t.transaction_id DESC
        ),
        -- The catalog prices a product in the subscription's own currency (what the app stored), else in the
        -- product's only catalog currency (the rule of CatalogPricing, docs/reports.md "Money from the catalog").
        catalog_only AS (
            SELECT product_id, min(currency) AS currency FROM products GROUP BY product_id HAVING count(*) = 1
        ),
        -- A product's billing period, when the catalog names one: a transaction's own dates overstate it once Apple
        -- extended its renewal date (RENEWAL_EXTENDED, up to 90 days).
        catalog_period AS (
            SELECT product_id, min(period) AS period FROM products GROUP BY product_id HAVING count(DISTINCT period) = 1
        ),
        priced AS (
            SELECT st.side, st.subscription_id, st.state, COALESCE(s.bundle_id, 'app') AS bundle_id, st.product_id,
                   COALESCE(l.is_trial, false) AS is_trial, COALESCE(l.is_intro_offer, false) AS is_intro_offer,
                   -- A family member's copy (FAMILY_SHARED) is the purchaser's money: no MRR of its own.
                   st.state IN ('active', 'grace_period') AND st.auto_renew IS TRUE
                       AND NOT COALESCE(l.is_trial, false)
                       AND l.ownership_type IS DISTINCT FROM 'FAMILY_SHARED' AS recurring,
                   -- What it renews at: the renewal info's price (Server API), else its newest transaction's, else
                   -- the catalog's.
                   CASE WHEN l.environment = 'Sandbox' OR st.environment = 'Sandbox' THEN NULL
                        WHEN st.renewal_price_milliunits IS NOT NULL AND st.renewal_currency IS NOT NULL
                             AND COALESCE(rp.period, cp.period, d.period) IS NOT NULL THEN 'renewal'
                        WHEN l.price_milliunits IS NOT NULL AND l.currency IS NOT NULL
                             AND l.expires_date > l.purchase_date THEN 'ledger'
                        WHEN l.price_milliunits IS NULL AND c.product_id IS NOT NULL THEN 'catalog'
                   END AS source,
                   st.renewal_currency, st.renewal_price_milliunits::numeric AS renewal_price,
                   COALESCE(rp.period, cp.period, d.period) AS renewal_period,
                   l.currency AS ledger_currency, l.price_milliunits::numeric AS ledger_price,
                   COALESCE(cp.period, d.period) AS ledger_period,
                   c.currency AS catalog_currency, c.price * 1000 AS catalog_price, c.period AS catalog_period
              FROM state st
              JOIN subscriptions s ON s.id = st.subscription_id
              LEFT JOIN latest l ON l.side = st.side AND l.subscription_id = st.subscription_id
              LEFT JOIN catalog_only o ON o.product_id = st.product_id
              LEFT JOIN products c ON c.product_id = st.product_id AND c.currency = COALESCE(s.currency, o.currency)
              LEFT JOIN catalog_period cp ON cp.product_id = st.product_id
              -- The renewing product's period (a pending downgrade or crossgrade renews as another product).
              LEFT JOIN catalog_period rp ON rp.product_id = st.auto_renew_product_id
             CROSS JOIN LATERAL (
                   SELECT CASE WHEN l.expires_date IS NULL OR l.purchase_date IS NULL THEN NULL
                               WHEN l.expires_date - l.purchase_date <= interval '10 days' THEN 'P1W'
                               WHEN l.expires_date - l.purchase_date <= interval '45 days' THEN 'P1M'
                               WHEN l.expires_date - l.purchase_date <= interval '75 days' THEN 'P2M'
                               WHEN l.expires_date - l.purchase_date <= interval '135 days' THEN 'P3M'
                               WHEN l.expires_date - l.purchase_date <= interval '270 days' THEN 'P6M'
                               ELSE 'P1Y' END AS period) d
        ),
        valued AS (
            SELECT p.side, p.subscription_id, p.state, p.bundle_id, p.product_id, p.is_trial, p.is_intro_offer,
                   p.recurring, p.source,
                   CASE p.source WHEN 'renewal' THEN p.renewal_currency WHEN 'ledger' THEN p.ledger_currency
                                 WHEN 'catalog' THEN p.catalog_currency ELSE '' END AS currency,
                   -- In twelfths of a month's price (exact: weekly x 52, monthly x 12, ..., yearly x 1), divided by 12
                   -- once per row when rounded. A factor 1::numeric / 12 is cut after 20 places: six yearly 79.99
                   -- made 39.99499...98 and rounded to 39.99, where the exact 39.995 rounds to 40.00.
                   CASE WHEN p.source IS NULL THEN NULL
                        WHEN NOT p.recurring THEN 0::numeric
                        ELSE m.price * CASE m.period WHEN 'P1W' THEN 52 WHEN 'P1M' THEN 12 WHEN 'P2M' THEN 6
                                                     WHEN 'P3M' THEN 4 WHEN 'P6M' THEN 2 WHEN 'P1Y' THEN 1
                                       END
                   END AS mrr
              FROM priced p
             CROSS JOIN LATERAL (
                   SELECT CASE p.source WHEN 'renewal' THEN p.renewal_price WHEN 'ledger' THEN p.ledger_price
                                   ELSE p.catalog_price END AS price,
                          CASE p.source WHEN 'renewal' THEN p.renewal_period WHEN 'ledger' THEN p.ledger_period
                                   ELSE p.catalog_period END AS period) m
        ),
        -- Per subscription and (app, product, currency): MRR (in twelfths) before and now, for the movement.
        moved AS (
            SELECT bundle_id, product_id, currency,
                   COALESCE(sum(mrr) FILTER (WHERE side = 1), 0) AS now_mrr,
                   COALESCE(sum(mrr) FILTER (WHERE side = 0), 0) AS prev_mrr
              FROM valued WHERE currency <> ''
             GROUP BY subscription_id, bundle_id, product_id, currency
        ),
        movement AS (
            SELECT bundle_id, product_id, currency,
                   sum(CASE WHEN prev_mrr = 0 AND now_mrr > 0 THEN now_mrr ELSE 0 END) AS mrr_new,
                   sum(CASE WHEN prev_mrr > 0 AND now_mrr > prev_mrr THEN now_mrr - prev_mrr ELSE 0 END) AS mrr_expansion,
                   sum(CASE WHEN prev_mrr > 0 AND now_mrr > 0 AND now_mrr < prev_mrr THEN prev_mrr - now_mrr ELSE 0 END)
                       AS mrr_contraction,
                   sum(CASE WHEN prev_mrr > 0 AND now_mrr = 0 THEN prev_mrr ELSE 0 END) AS mrr_churn
              FROM moved GROUP BY bundle_id, product_id, currency
            HAVING sum(prev_mrr + now_mrr) > 0
        ),
        -- Ledger events dated in the window, per subscription known now.
        events AS (
            SELECT st.subscription_id,
                   count(*) FILTER (WHERE t.kind = 'initial' AND \(inWindow("t.purchase_date"))) AS new_subscriptions,
                   count(*) FILTER (WHERE t.kind = 'renewal' AND \(inWindow("t.purchase_date"))) AS renewed,
                   count(*) FILTER (WHERE \(inWindow("COALESCE(t.revocation_date, t.cancellation_date)"))) AS refunded,
                   count(*) FILTER (
                       WHERE t.kind = 'renewal' AND \(inWindow("t.purchase_date")) AND NOT t.is_trial
                         AND NOT t.is_intro_offer
                         AND (SELECT b.is_trial FROM subscription_transactions b
                               WHERE b.original_transaction_id = t.original_transaction_id
                                 AND (b.purchase_date, b.transaction_id) < (t.purchase_date, t.transaction_id)
                               ORDER BY b.purchase_date DESC, b.transaction_id DESC LIMIT 1)) AS trial_conversions
              FROM state st
              JOIN subscription_transactions t ON t.original_transaction_id = st.original_transaction_id
             WHERE st.side = 1
               AND (\(inWindow("t.purchase_date")) OR \(inWindow("COALESCE(t.revocation_date, t.cancellation_date)")))
             GROUP BY st.subscription_id
        ),
        totals AS (
            SELECT v.bundle_id, v.product_id, v.currency,
                   count(*) FILTER (WHERE v.state = 'active') AS active,
                   count(*) FILTER (WHERE v.state = 'grace_period') AS grace_period,
                   count(*) FILTER (WHERE v.state = 'billing_retry') AS billing_retry,
                   count(*) FILTER (WHERE v.state IN ('active', 'grace_period') AND v.is_trial) AS in_trial,
                   count(*) FILTER (WHERE v.state IN ('active', 'grace_period') AND v.is_intro_offer) AS in_intro_offer,
                   COALESCE(sum(e.new_subscriptions), 0) AS new_subscriptions,
                   COALESCE(sum(e.renewed), 0) AS renewed,
                   count(*) FILTER (WHERE o.state = 'active' AND v.state IN ('grace_period', 'billing_retry')) AS lapsed,
                   count(*) FILTER (WHERE o.state IN ('active', 'grace_period', 'billing_retry') AND v.state = 'expired')
                       AS churned,
                   COALESCE(sum(e.refunded), 0) AS refunded,
                   count(*) FILTER (WHERE o.state IN ('expired', 'revoked') AND v.state IN ('active', 'grace_period'))
                       AS reactivated,
                   COALESCE(sum(e.trial_conversions), 0) AS trial_conversions,
                   count(*) FILTER (WHERE v.recurring AND v.currency <> '') AS mrr_subscriptions,
                   sum(v.mrr) AS mrr,
                   concat_ws('+', CASE WHEN bool_or(v.source = 'renewal') THEN 'renewal' END,
                                  CASE WHEN bool_or(v.source = 'ledger') THEN 'ledger' END,
                                  CASE WHEN bool_or(v.source = 'catalog') THEN 'catalog' END) AS mrr_source
              FROM valued v
              LEFT JOIN state o ON o.side = 0 AND o.subscription_id = v.subscription_id
              LEFT JOIN events e ON e.subscription_id = v.subscription_id
             WHERE v.side = 1
             GROUP BY v.bundle_id, v.product_id, v.currency
        )
        SELECT $1::date, k.bundle_id, k.product_id, k.currency, $4::bigint, $2::timestamptz, $3::timestamptz,
               COALESCE(t.active, 0), COALESCE(t.grace_period, 0), COALESCE(t.billing_retry, 0),
               COALESCE(t.in_trial, 0), COALESCE(t.in_intro_offer, 0), COALESCE(t.new_subscriptions, 0),
               COALESCE(t.renewed, 0), COALESCE(t.lapsed, 0), COALESCE(t.churned, 0), COALESCE(t.refunded, 0),
               COALESCE(t.reactivated, 0), COALESCE(t.trial_conversions, 0), COALESCE(t.mrr_subscriptions, 0),
               CASE WHEN k.currency = '' THEN NULL ELSE \(minorUnits("COALESCE(t.mrr, 0) / 12", "k.currency")) END,
               CASE WHEN k.currency = '' THEN NULL ELSE \(minorUnits("COALESCE(m.mrr_new, 0) / 12", "k.currency")) END,
               CASE WHEN k.currency = '' THEN NULL ELSE \(minorUnits("COALESCE(m.mrr_expansion, 0) / 12", "k.currency")) END,
               CASE WHEN k.currency = '' THEN NULL ELSE \(minorUnits("COALESCE(m.mrr_contraction, 0) / 12", "k.currency")) END,
               CASE WHEN k.currency = '' THEN NULL ELSE \(minorUnits("COALESCE(m.mrr_churn, 0) / 12", "k.currency")) END,
               COALESCE(t.mrr_source, ''), $6::text
          FROM (SELECT bundle_id, product_id, currency FROM totals
                UNION SELECT bundle_id, product_id, currency FROM movement) k
          LEFT JOIN totals t USING (bundle_id, product_id, currency)
          LEFT JOIN movement m USING (bundle_id, product_id, currency)
        """
}
