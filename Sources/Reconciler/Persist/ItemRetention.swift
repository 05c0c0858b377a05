import Foundation
import Postgres

/// The retention of `reconciliation_items` (docs/operations.md, "Retention"): the items of runs older than the
/// retention are deleted, except each subscription's newest decided item among them, so the table holds the
/// retention's nights plus at most one row per subscription, however long the reconciler has run.
///
/// What stays exact: a run's report and resume within the retention (a run still running or interrupted is never
/// pruned), and every trend snapshot and `--rebuild` of a day whose previous snapshot lies within it (a
/// subscription's state as of any time since the boundary is its newest decided item by then, which is kept).
/// The ledger, notifications, runs and trend snapshots are never pruned.
public struct ItemRetention: Sendable {
    /// Days of items kept by default (`--item-retention-days`).
    public static let defaultDays = 90
    /// A night prunes only once the oldest unpruned run is this many days past the retention, then every run past
    /// it: a prune re-reads the items kept (up to one per subscription), so it runs about once a week, not nightly.
    public static let stepDays = 7

    /// Days of items kept.
    public var days: Int

    public init(days: Int = Self.defaultDays) {
        self.days = days
    }

    /// What one prune did: the items of runs with an as-of before `before` were deleted (`items` of them; `runs`
    /// runs pruned now, each once), except `kept` items of pruned runs, subscriptions' newest decided ones.
    public struct Pruned: Sendable, Equatable {
        public var before: Date
        public var runs = 0, items = 0, kept = 0
    }

    /// The nightly run's prune: `prune(_:now:)` once the oldest finished run not pruned yet is more than
    /// `days` + `stepDays` days old; nil (nothing read but the runs) before that.
    public func pruneIfDue(_ connection: PostgresConnection, now: Date) throws -> Pruned? {
        let due = try connection.queryFirst(
            """
            SELECT EXISTS (SELECT 1 FROM reconciliation_runs
                            WHERE items_pruned_at IS NULL AND status NOT IN ('running', 'interrupted')
                              AND as_of < $1::timestamptz) AS due
            """,
            [now.addingTimeInterval(-Double(days + Self.stepDays) * 86_400)]
        )
        guard try due?.decode("due", as: Bool.self) == true else { return nil }
        return try prune(connection, now: now)
    }

    /// Prunes the items of the finished runs with an as-of more than `days` days before `now`. One transaction; a
    /// second prune with the same boundary deletes nothing.
    public func prune(_ connection: PostgresConnection, now: Date) throws -> Pruned {
        let before = now.addingTimeInterval(-Double(days) * 86_400)
        return try connection.transaction { db in
            let row = try db.queryFirst(Self.statement, [before])
            return Pruned(
                before: before,
                runs: try row?.decode("runs") ?? 0,
                items: try row?.decode("deleted") ?? 0,
                kept: try row?.decode("kept") ?? 0
            )
        }
    }

    /// `$1`: the boundary. The old runs' items are read by run (`reconciliation_items_pkey`, run_id first): after the
    /// first prune they are the kept rows (one per subscription at most) and the night that just aged out.
    static let statement = """
        WITH old AS MATERIALIZED (
            SELECT id, as_of, dry_run, items_pruned_at FROM reconciliation_runs
             WHERE as_of < $1::timestamptz AND status NOT IN ('running', 'interrupted')
        ),
        items AS MATERIALIZED (
            SELECT i.run_id, i.subscription_id, r.as_of, NOT r.dry_run AND \(TrendSnapshotSQL.decidedFilter) AS decided
              FROM old r
             CROSS JOIN LATERAL (SELECT * FROM reconciliation_items i WHERE i.run_id = r.id OFFSET 0) i
        ),
        keep AS (
            SELECT DISTINCT ON (subscription_id) run_id, subscription_id
              FROM items WHERE decided
             ORDER BY subscription_id, as_of DESC, run_id DESC
        ),
        gone AS (
            DELETE FROM reconciliation_items d
             USING items x
             WHERE d.run_id = x.run_id AND d.subscription_id = x.subscription_id
               AND NOT EXISTS (SELECT 1 FROM keep k WHERE k.run_id = x.run_id AND k.subscription_id = x.subscription_id)
            RETURNING d.run_id
        ),
        marked AS (
            UPDATE reconciliation_runs SET items_pruned_at = now()
             WHERE id IN (SELECT id FROM old WHERE items_pruned_at IS NULL)
            RETURNING id
        )
        SELECT (SELECT count(*) FROM marked)::bigint AS runs, (SELECT count(*) FROM gone)::bigint AS deleted,
               (SELECT count(*) FROM keep)::bigint AS kept
        """
}
