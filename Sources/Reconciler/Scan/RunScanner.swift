import Foundation
import Postgres

/// Materialises a run's selection into `reconciliation_items`, page by page (keyset pagination), each
/// page committed together with the scan cursor, so memory stays flat and a run killed mid-scan resumes
/// the scan where it stopped. Selected rows are copied as `pending` items with their "previous" values.
public struct RunScanner {
    public let connection: PostgresConnection
    public let runId: Int64
    public let asOf: Date
    public let pageSize: Int

    public init(connection: PostgresConnection, runId: Int64, asOf: Date, pageSize: Int = 5000) {
        self.connection = connection
        self.runId = runId
        self.asOf = asOf
        self.pageSize = pageSize
    }

    /// Scans until the selection is exhausted; returns the number of items the run has in all.
    /// `onPage` is told the running total after each committed page.
    @discardableResult
    public func scan(_ selection: Selection, onPage: (Int) -> Void = { _ in }) throws -> Int {
        switch selection {
        case .due(let lookahead, let lookback, let minRecheck, let recheckRevoked, _, let sweepDays):
            try scanDue(
                lookahead: lookahead,
                lookback: lookback,
                minRecheck: minRecheck,
                recheckRevoked: recheckRevoked,
                sweepDays: sweepDays,
                onPage: onPage
            )
        case .backfill(let filter):
            try scanBackfill(filter, onPage: onPage)
        }
        return try ScanCursors(connection: connection).dueCount(runId: runId)
    }

    private static let insertColumns = """
        INSERT INTO reconciliation_items (run_id, subscription_id, original_transaction_id, user_id, previous_state,
                                          previous_expires_at, previous_product_id, previous_auto_renew,
                                          subscription_group_id, due_reason)
        """

    /// The columns every due phase's page reads (the sweep's keyset needs `last_verified_at`).
    private static let pageColumns = """
        id, original_transaction_id, user_id, state, expires_at, product_id, auto_renew, subscription_group_id,
        last_verified_at
        """

    private func scanDue(
        lookahead: Double,
        lookback: Double,
        minRecheck: Double,
        recheckRevoked: Double,
        sweepDays: Double,
        onPage: (Int) -> Void
    ) throws {
        // Phase 1: rows never verified (id order, partial index subscriptions_unverified_idx).
        // Phase 2: the expiry window (expires_at, id order, partial index subscriptions_due_idx).
        // Phase 3: revoked rows the app changed since the reconciler verified them (`version` moved past
        // `verified_version`), or verified longer ago than the recheck interval (id order, partial index
        // subscriptions_revoked_idx): a customer can buy again after a refund.
        // The cursor records the phase, so a run killed mid-scan resumes in the right one (a run stored by an
        // older build, stopped in the window phase, goes on to the revoked phase); items are inserted
        // ON CONFLICT DO NOTHING, so a row in two phases is selected once.
        // Phases 2 and 3 leave out a row whose last verification was a rejection until its `next_check_at`
        // (written by the rejection, RejectedRecheckSchedule), unless the app changed the row since
        // (sql/005_rejected_recheck.sql). Phase 1 never sees such a row (it has been verified). When the scan
        // completes, the rows left out this way are counted on the run row for the report.
        // Phase 4, the sweep (docs/architecture.md, "The sweep"): when it starts, the run counts the verified,
        // non-revoked rows and stores ceil(count / sweepDays) as its quota (on the run row for the report,
        // and as `remaining` in the cursor); it then takes the least recently verified of them not already
        // selected, (last_verified_at, id) order through subscriptions_sweep_idx (sql/006_sweep.sql), still
        // honouring --min-recheck and the rejected schedule, until the quota is spent.
        let phases = sweepDays > 0 ? DueReason.duePhases : DueReason.duePhases.filter { $0 != .sweep }
        let from = asOf.addingTimeInterval(-lookback)
        let to = asOf.addingTimeInterval(lookahead)
        let recheckBefore = asOf.addingTimeInterval(-minRecheck)
        let revokedRecheckBefore = asOf.addingTimeInterval(-max(recheckRevoked, minRecheck))
        while true {
            let finished: Bool = try connection.transaction { conn in
                let cursors = ScanCursors(connection: conn)
                guard let run = try cursors.lockDue(runId: runId) else { return true }
                let phase = run.phase
                let cursorId = run.id ?? 0
                let pageSQL: String
                var params: [(any PostgresEncodable)?]
                var pageLimit = pageSize
                var remaining: Int64? = nil
                switch phase {
                case .unverified:
                    pageSQL = """
                        SELECT \(Self.pageColumns)
                          FROM subscriptions
                         WHERE last_verified_at IS NULL AND id > $2
                         ORDER BY id
                         LIMIT $3
                        """
                    params = [runId, cursorId, Int64(pageSize)]
                case .revoked:
                    pageSQL = """
                        SELECT \(Self.pageColumns)
                          FROM subscriptions
                         WHERE state = 'revoked' AND id > $2
                           AND (version IS DISTINCT FROM verified_version
                                OR last_verified_at IS NULL OR last_verified_at < $3)
                           AND \(Self.rejectedScheduleAllows("$5"))
                         ORDER BY id
                         LIMIT $4
                        """
                    params = [runId, cursorId, revokedRecheckBefore, Int64(pageSize), asOf]
                case .sweep:
                    let left = try run.remaining ?? cursors.startSweep(runId: runId, sweepDays: sweepDays)
                    remaining = left
                    pageLimit = Int(max(0, min(Int64(pageSize), left)))
                    let cursorVerified = run.verifiedAt ?? Date.distantPast
                    pageSQL = Self.sweepPageSQL
                    params = [runId, recheckBefore, cursorVerified, cursorId, Int64(pageLimit), asOf]
                case .window, .notification, .backfill:
                    // The window (a cursor never holds the other two: they are not scan phases).
                    let cursorExpires = run.expiresAt ?? Date.distantPast
                    pageSQL = """
                        SELECT \(Self.pageColumns)
                          FROM subscriptions
                         WHERE state IS DISTINCT FROM 'revoked'
                           AND expires_at >= $2 AND expires_at <= $3
                           AND (expires_at, id) > ($5::timestamptz, $6::bigint)
                           AND (last_verified_at IS NULL OR last_verified_at < $4)
                           AND \(Self.rejectedScheduleAllows("$8"))
                         ORDER BY expires_at, id
                         LIMIT $7
                        """
                    params = [runId, from, to, recheckBefore, cursorExpires, cursorId, Int64(pageSize), asOf]
                }
                let page = try conn.queryFirst(
                    """
                    WITH page AS (\(pageSQL)
                    ), inserted AS (
                        \(Self.insertColumns)
                        SELECT $1, id, original_transaction_id, user_id, state, expires_at, product_id, auto_renew,
                               subscription_group_id, '\(phase.rawValue)'
                          FROM page
                        ON CONFLICT (run_id, subscription_id) DO NOTHING
                        RETURNING 1
                    ), last AS (
                        SELECT expires_at, last_verified_at, id FROM page
                         ORDER BY \(Self.pageOrder(phase)) LIMIT 1
                    )
                    SELECT (SELECT count(*) FROM page) AS page_rows,
                           (SELECT count(*) FROM inserted) AS inserted_rows,
                           (SELECT expires_at FROM last) AS last_expires_at,
                           (SELECT last_verified_at FROM last) AS last_verified_at,
                           (SELECT id FROM last) AS last_id
                    """,
                    params
                )
                let pageRows: Int = try page?.decode("page_rows") ?? 0
                let inserted: Int = try page?.decode("inserted_rows") ?? 0
                remaining = remaining.map { $0 - Int64(inserted) }
                let phaseDone = pageRows < pageLimit || (remaining.map { $0 <= 0 } ?? false)
                let lastId: Int64? = try page?.decode("last_id", as: Int64?.self)
                let lastExpires: Date? = try page?.decode("last_expires_at", as: Date?.self)
                let lastVerified: Date? = try page?.decode("last_verified_at", as: Date?.self)
                let nextPhase: DueReason
                let completed: Bool
                var nextCursorId: Int64? = lastId
                var cursorExpires: Date? = phase == .window ? lastExpires : nil
                var cursorVerified: Date? = phase == .sweep ? lastVerified : nil
                let following = phases.firstIndex(of: phase).map { $0 + 1 }
                    .flatMap { $0 < phases.count ? phases[$0] : nil }
                if phaseDone, let following {
                    nextPhase = following
                    completed = false
                    nextCursorId = nil
                    cursorExpires = nil
                    cursorVerified = nil
                    remaining = nil
                } else {
                    nextPhase = phase
                    completed = phaseDone || lastId == nil
                }
                if completed {
                    try cursors.countNotDueRejected(
                        runId: runId,
                        asOf: asOf,
                        from: from,
                        to: to,
                        recheckBefore: recheckBefore,
                        revokedRecheckBefore: revokedRecheckBefore
                    )
                }
                CrashPoints.reach("scan-page")
                let next = ScanCursors.Due(
                    phase: nextPhase,
                    id: nextCursorId,
                    expiresAt: cursorExpires,
                    verifiedAt: cursorVerified,
                    remaining: remaining
                )
                try cursors.storeDue(runId: runId, next, inserted: inserted, completed: completed)
                return completed
            }
            onPage(try ScanCursors(connection: connection).dueCount(runId: runId))
            if finished { return }
        }
    }

    /// The keyset order of a due phase's page, descending (its last row is the cursor).
    private static func pageOrder(_ phase: DueReason) -> String {
        switch phase {
        case .window: return "expires_at DESC, id DESC"
        case .sweep: return "last_verified_at DESC, id DESC"
        default: return "id DESC"
        }
    }

    /// A page of the sweep: $1 run, $2 --min-recheck bound, $3/$4 keyset cursor (last_verified_at, id),
    /// $5 limit, $6 as-of. Rows the run already selected are skipped, so the quota counts new items only.
    public static let sweepPageSQL = """
        SELECT \(pageColumns)
          FROM subscriptions s
         WHERE state IS DISTINCT FROM 'revoked' AND last_verified_at IS NOT NULL
           AND last_verified_at < $2
           AND (last_verified_at, id) > ($3::timestamptz, $4::bigint)
           AND \(rejectedScheduleAllows("$6"))
           AND \(notSelectedByTheRun("$1"))
         ORDER BY last_verified_at, id
         LIMIT $5
        """

    /// The rows the sweep spreads over its nights: verified and not revoked.
    public static let sweepEligibleSQL = """
        SELECT count(*) AS n FROM subscriptions
         WHERE state IS DISTINCT FROM 'revoked' AND last_verified_at IS NOT NULL
        """

    /// The schedule of rejected rows as a condition on `subscriptions`: no schedule, its time has come
    /// (`asOfParam` is the run's as-of), or the app changed the row since the reconciler wrote it.
    static func rejectedScheduleAllows(_ asOfParam: String) -> String {
        "(next_check_at IS NULL OR next_check_at <= \(asOfParam) OR version IS DISTINCT FROM verified_version)"
    }

    /// The rows the due phases would have selected but for the rejected schedule, and the earliest next check
    /// among them, stored on the run row (the report's "not due (rejected, next check on DATE)"). Reads the
    /// rows with a schedule through subscriptions_next_check_idx (sql/005_rejected_recheck.sql).
    public static let notDueRejectedSQL = """
        SELECT count(*) AS n, min(next_check_at) AS next
          FROM subscriptions s
         WHERE next_check_at > $2 AND version IS NOT DISTINCT FROM verified_version
           AND ((state IS DISTINCT FROM 'revoked' AND expires_at >= $3 AND expires_at <= $4
                 AND (last_verified_at IS NULL OR last_verified_at < $5))
                OR (state = 'revoked' AND (last_verified_at IS NULL OR last_verified_at < $6)))
           AND \(notSelectedByTheRun("$1"))
        """

    /// "The run has not selected row `s`", as one primary-key probe of `reconciliation_items` per row of `s`.
    /// `OFFSET 0` keeps the `NOT EXISTS` a per-row subplan on purpose: PostgreSQL would otherwise plan an anti
    /// join, and while the run's items are newer than the table's statistics it estimates one item for the
    /// run, may then read all of the run's items for every candidate row (`Join Filter: (i.subscription_id =
    /// s.id)`), and the scan grows with candidates x items: a second at 20,000 subscriptions, minutes at a
    /// million. As a subplan it probes `reconciliation_items_pkey` with both keys, and the planner still
    /// expects most rows to pass (so the sweep keeps reading its index in order, with no sort)
    /// (docs/architecture.md, "Database work per subscription"; `SweepScanTests` holds both plans).
    static func notSelectedByTheRun(_ runParam: String) -> String {
        "NOT EXISTS (SELECT 1 FROM reconciliation_items i WHERE i.run_id = \(runParam) AND i.subscription_id = s.id OFFSET 0)"
    }

    /// Backfill: the filters of `BackfillFilter`, keyset on id. Explicit id lists are checked first:
    /// ids with no subscription are an error naming them (nothing is selected then).
    private func scanBackfill(_ filter: BackfillFilter, onPage: (Int) -> Void) throws {
        if let ids = filter.originalTransactionIds {
            let known = try connection.query(
                "SELECT original_transaction_id FROM subscriptions WHERE original_transaction_id = ANY($1::text[])",
                [ids.map { Optional($0) }]
            )
            let knownSet = Set(try known.map { try $0.decode("original_transaction_id", as: String.self) })
            let unknown = ids.filter { !knownSet.contains($0) }
            if !unknown.isEmpty {
                let shown = unknown.prefix(20).joined(separator: ", ")
                let more = unknown.count > 20 ? " and \(unknown.count - 20) more" : ""
                throw UsageError(
                    "\(unknown.count) original_transaction_id(s) have no subscription row: \(shown)\(more)"
                        + (filter.idsFile.map { " (from \($0) or the command line)" } ?? "")
                )
            }
        }
        var conditions: [String] = []
        var params: [(any PostgresEncodable)?] = [runId]
        func add(_ value: any PostgresEncodable, _ sql: (String) -> String) {
            params.append(value)
            conditions.append(sql("$\(params.count)"))
        }
        if let ids = filter.originalTransactionIds {
            add(ids.map { Optional($0) }) { "original_transaction_id = ANY(\($0)::text[])" }
        }
        if let users = filter.userIds { add(users.map { Optional($0) }) { "user_id = ANY(\($0)::text[])" } }
        if let products = filter.productIds { add(products.map { Optional($0) }) { "product_id = ANY(\($0)::text[])" } }
        if let from = filter.expiresFrom { add(from) { "expires_at >= \($0)" } }
        if let to = filter.expiresTo { add(to) { "expires_at < \($0)" } }
        if let states = filter.states {
            let wantsUnknown = states.contains("unknown")
            let named = states.filter { $0 != "unknown" }
            params.append(named.map { Optional($0) })
            conditions.append("(state = ANY($\(params.count)::text[])" + (wantsUnknown ? " OR state IS NULL)" : ")"))
        }
        let whereSQL = conditions.isEmpty ? "" : " AND " + conditions.joined(separator: " AND ")
        params.append(Int64(pageSize))
        let limitParam = "$\(params.count)"
        params.append(Int64(0))
        let cursorParam = "$\(params.count)"
        while true {
            let finished: Bool = try connection.transaction { conn in
                let cursors = ScanCursors(connection: conn)
                guard let run = try cursors.lockBackfill(runId: runId) else { return true }
                var p = params
                p[p.count - 1] = run.id ?? 0
                let page = try conn.queryFirst(
                    """
                    WITH page AS (
                        SELECT id, original_transaction_id, user_id, state, expires_at, product_id, auto_renew,
                               subscription_group_id
                          FROM subscriptions
                         WHERE id > \(cursorParam)\(whereSQL)
                         ORDER BY id
                         LIMIT \(limitParam)
                    ), inserted AS (
                        \(Self.insertColumns)
                        SELECT $1, id, original_transaction_id, user_id, state, expires_at, product_id, auto_renew,
                               subscription_group_id, 'backfill'
                          FROM page
                        ON CONFLICT (run_id, subscription_id) DO NOTHING
                        RETURNING 1
                    )
                    SELECT (SELECT count(*) FROM page) AS page_rows, (SELECT count(*) FROM inserted) AS inserted_rows,
                           (SELECT max(id) FROM page) AS last_id
                    """,
                    p
                )
                let pageRows: Int = try page?.decode("page_rows") ?? 0
                let inserted: Int = try page?.decode("inserted_rows") ?? 0
                let done = pageRows < pageSize
                let lastId: Int64? = try page?.decode("last_id", as: Int64?.self)
                CrashPoints.reach("scan-page")
                try cursors.storeBackfill(
                    runId: runId,
                    ScanCursors.Backfill(id: lastId),
                    inserted: inserted,
                    completed: done
                )
                return done
            }
            onPage(try ScanCursors(connection: connection).dueCount(runId: runId))
            if finished { return }
        }
    }
}
