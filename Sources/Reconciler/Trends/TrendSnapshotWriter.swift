import Foundation
import Postgres

/// Records the daily trend snapshots (`trend_snapshots`, docs/reports.md "Trends"): after a completed run, the
/// rows of its snapshot date.
///
/// A day's snapshot is always the one of its **day run**: the completed, non-dry run with the newest as-of on
/// that calendar day (UTC). So a re-run or `--resume` of the same day replaces the day's rows.
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
            return try Self.snapshot(db, date: try row.decode("day"), recordedBy: "run")
        }
    }

    /// Deletes the rows of `date` and inserts them again from its day run (none when the day has no
    /// completed, non-dry run). Runs inside the caller's transaction.
    static func snapshot(_ db: PostgresConnection, date: String, recordedBy: String) throws -> Day? {
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
        let inserted = try db.execute(
            TrendSnapshotSQL.insert,
            [date, asOf, previousAsOf, runId, Self.minorUnitsJSON, recordedBy]
        )
        return Day(date: date, runId: runId, asOf: asOf, previousAsOf: previousAsOf, rows: inserted.rowsAffected)
    }

    /// `CurrencyFormat`'s minor-unit exceptions as a JSON object for the statement (`$5`).
    static let minorUnitsJSON: String = {
        let members = CurrencyFormat.minorUnitDigitsExceptions.sorted { $0.key < $1.key }.map {
            "\"\($0.key)\":\($0.value)"
        }
        return "{" + members.joined(separator: ",") + "}"
    }()
}
