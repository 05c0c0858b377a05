import Foundation
import Postgres

/// Records the daily trend snapshots (`trend_snapshots`, docs/reports.md "Trends across nights"): after a completed run, the
/// rows of its snapshot date; with `rebuild`, every day of a range again from the runs and the ledger.
///
/// A day's snapshot is always the one of its **day run**: the completed, non-dry run with the newest as-of on
/// that calendar day (UTC). So a re-run or `--resume` of the same day replaces the day's rows, and a rebuild
/// computes each day with the same statement, run and window as the night did.
public struct TrendSnapshotWriter {
    public let connection: PostgresConnection

    public init(connection: PostgresConnection) {
        self.connection = connection
    }

    /// One day's snapshot: its date, its day run and the window of its flows.
    public struct Day: Sendable, Equatable {
        /// `YYYY-MM-DD` (UTC).
        public var date: String
        public var runId: Int64
        public var asOf: Date
        /// The as-of of the newest completed, non-dry run of an earlier day; midnight UTC of `asOf` when none.
        public var previousAsOf: Date
        /// Rows written.
        public var rows: Int
    }

    /// Replaces the snapshot of run `runId`'s day (nil when the run is not completed or is a dry run). One
    /// transaction: the day's rows are deleted and inserted by one set-based statement.
    @discardableResult
    public func record(runId: Int64) throws -> Day? {
        try connection.transaction { db in
            guard
                let row = try db.queryFirst(
                    """
                    SELECT to_char(as_of AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day FROM reconciliation_runs
                     WHERE id = $1 AND status = 'completed' AND NOT dry_run
                    """,
                    [runId]
                )
            else { return nil }
            return try Self.snapshot(db, date: try row.decode("day"), source: .carried)
        }
    }

    /// Recomputes every day from `from` through `to` (`YYYY-MM-DD`, UTC, inclusive): days with a completed,
    /// non-dry run get their snapshot again, days without one lose any rows they had. Each day is one
    /// transaction. Returns the days written.
    public func rebuild(from: String, to: String) throws -> [Day] {
        let dates = try connection.query(
            """
            SELECT to_char(d, 'YYYY-MM-DD') AS day
              FROM generate_series($1::date, $2::date, interval '1 day') AS d ORDER BY d
            """,
            [from, to]
        ).map { try $0.decode("day", as: String.self) }
        var days: [Day] = []
        for date in dates {
            if let day = try connection.transaction({ try Self.snapshot($0, date: date, source: .history) }) {
                days.append(day)
            }
        }
        return days
    }

    /// The first and last day (`YYYY-MM-DD`) of the `days` days ending on the newest completed, non-dry run's
    /// day; nil when there is no such run.
    public func range(days: Int) throws -> (from: String, to: String)? {
        let row = try connection.queryFirst(
            """
            SELECT to_char(d - ($1::int - 1), 'YYYY-MM-DD') AS first, to_char(d, 'YYYY-MM-DD') AS last
              FROM (SELECT max(as_of AT TIME ZONE 'UTC')::date AS d FROM reconciliation_runs
                     WHERE status = 'completed' AND NOT dry_run) newest
             WHERE d IS NOT NULL
            """,
            [Int64(max(1, days))]
        )
        guard let row else { return nil }
        return (try row.decode("first"), try row.decode("last"))
    }

    /// Deletes the rows of `date` and inserts them again from its day run (none when the day has no
    /// completed, non-dry run). Runs inside the caller's transaction. From the carried state (the night: first
    /// advanced to the previous as-of, `TrendCarriedState`) or from the whole history (a rebuild); both give the
    /// same rows.
    ///
    /// Nested loops are off for the statement (`planSettings`, this transaction only): it is written as hash joins
    /// and passes over the items and the ledger, and a night's statistics predate what the run just wrote (on a
    /// first night, empty tables). Planned on those, PostgreSQL joined the run's items and the ledger row by
    /// row: 124 s at 20,000 subscriptions instead of under a second (docs/reports.md, "Trends across nights").
    static func snapshot(_ db: PostgresConnection, date: String, source: TrendSnapshotSQL.Source) throws -> Day? {
        try db.execute(planSettings)
        try db.execute("DELETE FROM trend_snapshots WHERE snapshot_date = $1::date", [date])
        guard
            let run = try db.queryFirst(
                """
                SELECT r.id, r.as_of,
                       COALESCE((SELECT max(p.as_of) FROM reconciliation_runs p
                                  WHERE p.status = 'completed' AND NOT p.dry_run
                                    AND p.as_of < ($1::date)::timestamp AT TIME ZONE 'UTC'),
                                ($1::date)::timestamp AT TIME ZONE 'UTC') AS previous_as_of
                  FROM reconciliation_runs r
                 WHERE r.status = 'completed' AND NOT r.dry_run
                   AND r.as_of >= ($1::date)::timestamp AT TIME ZONE 'UTC'
                   AND r.as_of < ($1::date + 1)::timestamp AT TIME ZONE 'UTC'
                 ORDER BY r.as_of DESC, r.id DESC LIMIT 1
                """,
                [date]
            )
        else { return nil }
        let runId: Int64 = try run.decode("id")
        let asOf: Date = try run.decode("as_of")
        let previousAsOf: Date = try run.decode("previous_as_of")
        if source == .carried {
            try TrendCarriedState.advance(db, through: previousAsOf)
        }
        let inserted = try db.execute(
            TrendSnapshotSQL.insert(source),
            [date, asOf, previousAsOf, runId, Self.minorUnitsJSON, source == .carried ? "run" : "rebuild"]
        )
        return Day(date: date, runId: runId, asOf: asOf, previousAsOf: previousAsOf, rows: inserted.rowsAffected)
    }

    /// The planner settings of the snapshot's transaction (see `snapshot`).
    static let planSettings = "SET LOCAL enable_nestloop = off"

    /// `CurrencyFormat`'s minor-unit exceptions as a JSON object for the statement (`$5`).
    static let minorUnitsJSON: String = {
        let members = CurrencyFormat.minorUnitDigitsExceptions.sorted { $0.key < $1.key }.map {
            "\"\($0.key)\":\($0.value)"
        }
        return "{" + members.joined(separator: ",") + "}"
    }()
}
