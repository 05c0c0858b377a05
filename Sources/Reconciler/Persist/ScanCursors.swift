import Foundation
import Postgres

/// The scan's progress on the run's row (`RunScanner`): its cursor (`scan_cursor`), whether it is complete, the
/// items it selected so far (`due_count`) and what it counts for the report (the sweep's quota, the rows left out
/// by the rejected schedule). Each statement runs on the connection given, inside the scan's page transaction
/// where the scanner opens one.
struct ScanCursors {
    let connection: PostgresConnection

    /// Where a due scan still going stands: the phase (`DueReason.duePhases`) and the keyset cursor in it.
    struct Due: Sendable {
        var phase: DueReason
        var id: Int64?
        var expiresAt: Date?
        var verifiedAt: Date?
        /// The sweep's quota still to select (the sweep phase only, once it started).
        var remaining: Int64?
    }

    /// Where a backfill's scan still going stands: the last subscription id selected.
    struct Backfill: Sendable {
        var id: Int64?
    }

    /// Inside the page's transaction: locks the run's row (one page at a time, whichever process scans) and
    /// returns the due scan's cursor; nil when the scan is complete or there is no such run.
    func lockDue(runId: Int64) throws -> Due? {
        guard
            let run = try connection.queryFirst(
                """
                SELECT scan_completed, COALESCE(scan_cursor->>'phase', 'unverified') AS phase,
                       (scan_cursor->>'expires_at')::timestamptz AS cursor_expires_at,
                       (scan_cursor->>'verified_at')::timestamptz AS cursor_verified_at,
                       (scan_cursor->>'remaining')::bigint AS cursor_remaining,
                       (scan_cursor->>'id')::bigint AS cursor_id
                  FROM reconciliation_runs WHERE id = $1 FOR UPDATE
                """,
                [runId]
            )
        else { return nil }
        guard try !run.decode("scan_completed", as: Bool.self) else { return nil }
        return Due(
            // A phase this build does not know (a cursor of another version) goes on as the window.
            phase: DueReason(rawValue: try run.decode("phase", as: String.self)) ?? .window,
            id: try run.decode("cursor_id"),
            expiresAt: try run.decode("cursor_expires_at"),
            verifiedAt: try run.decode("cursor_verified_at"),
            remaining: try run.decode("cursor_remaining")
        )
    }

    /// Stores the due scan's cursor after a page that selected `inserted` items, and whether the scan is now
    /// complete. The cursor is built by the server so the timestamp keeps its microseconds.
    func storeDue(runId: Int64, _ cursor: Due, inserted: Int, completed: Bool) throws {
        try connection.execute(
            """
            UPDATE reconciliation_runs
               SET scan_cursor = jsonb_strip_nulls(jsonb_build_object(
                       'phase', $2::text, 'id', $3::bigint, 'expires_at', $4::timestamptz,
                       'verified_at', $7::timestamptz, 'remaining', $8::bigint)),
                   due_count = due_count + $5, scan_completed = $6, heartbeat_at = now()
             WHERE id = $1
            """,
            [
                runId, cursor.phase.rawValue, cursor.id, cursor.expiresAt, Int64(inserted), completed,
                cursor.verifiedAt, cursor.remaining,
            ]
        )
    }

    /// The sweep's eligible rows (verified, not revoked) and its quota, ceil(eligible / sweepDays), stored on
    /// the run row for the report; returns the quota. Once per run; most rows are eligible, so PostgreSQL
    /// reads the table for this count.
    func startSweep(runId: Int64, sweepDays: Double) throws -> Int64 {
        let row = try connection.queryFirst(
            """
            WITH c AS (\(RunScanner.sweepEligibleSQL))
            UPDATE reconciliation_runs
               SET sweep_eligible_count = c.n, sweep_quota = ceil(c.n / $2::float8)::bigint
              FROM c WHERE id = $1
            RETURNING sweep_quota
            """,
            [runId, sweepDays]
        )
        return try row?.decode("sweep_quota", as: Int64.self) ?? 0
    }

    /// Stores on the run row the rows the due phases left out for the rejected schedule, and the earliest next
    /// check among them (`RunScanner.notDueRejectedSQL`, its parameters after the run's id in order).
    func countNotDueRejected(
        runId: Int64,
        asOf: Date,
        from: Date,
        to: Date,
        recheckBefore: Date,
        revokedRecheckBefore: Date
    ) throws {
        try connection.execute(
            """
            WITH c AS (\(RunScanner.notDueRejectedSQL))
            UPDATE reconciliation_runs SET not_due_rejected_count = c.n, not_due_rejected_next = c.next
              FROM c WHERE id = $1
            """,
            [runId, asOf, from, to, recheckBefore, revokedRecheckBefore]
        )
    }

    /// Inside the page's transaction: locks the run's row and returns the backfill scan's cursor; nil when there is
    /// no such run or the scan is complete.
    func lockBackfill(runId: Int64) throws -> Backfill? {
        guard
            let run = try connection.queryFirst(
                "SELECT scan_completed, (scan_cursor->>'id')::bigint AS cursor_id FROM reconciliation_runs WHERE id = $1 FOR UPDATE",
                [runId]
            )
        else { return nil }
        guard try !run.decode("scan_completed", as: Bool.self) else { return nil }
        return Backfill(id: try run.decode("cursor_id"))
    }

    /// Stores the backfill scan's cursor after a page that selected `inserted` items (a page with no rows keeps
    /// the cursor it had), and whether the scan is now complete.
    func storeBackfill(runId: Int64, _ cursor: Backfill, inserted: Int, completed: Bool) throws {
        try connection.execute(
            """
            UPDATE reconciliation_runs
               SET scan_cursor = CASE WHEN $2::bigint IS NULL THEN scan_cursor
                                      ELSE jsonb_build_object('id', $2::bigint) END,
                   due_count = due_count + $3, scan_completed = $4, heartbeat_at = now()
             WHERE id = $1
            """,
            [runId, cursor.id, Int64(inserted), completed]
        )
    }

    /// The items the run has selected so far (`due_count`), 0 when there is no such run.
    func dueCount(runId: Int64) throws -> Int {
        try connection.queryFirst("SELECT due_count FROM reconciliation_runs WHERE id = $1", [runId])?
            .decode("due_count", as: Int.self) ?? 0
    }
}
