import Foundation
import Postgres

/// The trend snapshot's carried state (`trend_subscription_state`, sql/019_trend_carried_state.sql; docs/reports.md
/// "Trends across nights"): each subscription's newest decided item among the runs folded so far, so that a night
/// reads one row per subscription and its own night's items instead of every item ever decided.
///
/// A cache of `reconciliation_items`. Folding a run is a merge that keeps each subscription's newest item (by the
/// run's as-of, then its id), so folding a run twice, or in any order, gives the same table.
enum TrendCarriedState {
    /// Makes the carried state hold exactly the non-dry runs with an as-of up to `through`, as they stand now.
    /// Runs inside the caller's transaction, which it locks against another snapshot writer.
    ///
    /// When the table holds a run newer than `through` (a day recorded out of order), it is emptied and folded
    /// again from the items: one read of the history, as `report --trends --rebuild` does for every day. Otherwise
    /// only the runs not folded yet are read, normally the previous day's.
    static func advance(_ db: PostgresConnection, through: Date) throws {
        try db.execute("LOCK TABLE trend_folded_runs IN SHARE ROW EXCLUSIVE MODE")
        let ahead = try db.queryFirst(
            "SELECT EXISTS (SELECT 1 FROM trend_folded_runs WHERE run_as_of > $1::timestamptz) AS ahead",
            [through]
        )
        if try ahead?.decode("ahead", as: Bool.self) == true {
            try db.execute("DELETE FROM trend_subscription_state")
            try db.execute("DELETE FROM trend_folded_runs")
        }
        try db.execute(fold, [through])
    }

    /// Folds the runs up to `$1` not folded yet (or folded in another status) and records them as folded.
    ///
    /// Plan: the unfolded runs (`reconciliation_runs`, a few rows) -> their items by `reconciliation_items_pkey`
    /// (run_id first) -> sort per subscription -> insert, or update the carried row when the item is newer.
    static let fold = """
        WITH runs AS MATERIALIZED (\(TrendSnapshotSQL.unfoldedRuns(upTo: "$1::timestamptz"))),
        marked AS (
            INSERT INTO trend_folded_runs (run_id, run_as_of, status)
            SELECT id, as_of, status FROM runs
            ON CONFLICT (run_id) DO UPDATE SET status = EXCLUDED.status, folded_at = now()
        ),
        newest AS (
            SELECT DISTINCT ON (subscription_id) *
              FROM (\(TrendSnapshotSQL.decidedItems(ofRuns: "runs"))) d
             ORDER BY subscription_id, as_of DESC, run_id DESC
        )
        INSERT INTO trend_subscription_state AS t (
            subscription_id, run_id, run_as_of, original_transaction_id, state, product_id, auto_renew,
            auto_renew_product_id, environment, renewal_price_milliunits, renewal_currency)
        SELECT subscription_id, run_id, as_of, original_transaction_id, state, product_id, auto_renew,
               auto_renew_product_id, environment, renewal_price_milliunits, renewal_currency
          FROM newest
        ON CONFLICT (subscription_id) DO UPDATE
           SET run_id = EXCLUDED.run_id, run_as_of = EXCLUDED.run_as_of,
               original_transaction_id = EXCLUDED.original_transaction_id, state = EXCLUDED.state,
               product_id = EXCLUDED.product_id, auto_renew = EXCLUDED.auto_renew,
               auto_renew_product_id = EXCLUDED.auto_renew_product_id, environment = EXCLUDED.environment,
               renewal_price_milliunits = EXCLUDED.renewal_price_milliunits,
               renewal_currency = EXCLUDED.renewal_currency
         WHERE (EXCLUDED.run_as_of, EXCLUDED.run_id) >= (t.run_as_of, t.run_id)
        """
}
