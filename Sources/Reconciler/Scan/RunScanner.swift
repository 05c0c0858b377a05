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
            let bounds = DueBounds(
                asOf: asOf,
                lookahead: lookahead,
                lookback: lookback,
                minRecheck: minRecheck,
                recheckRevoked: recheckRevoked
            )
            try scanDue(bounds, sweepDays: sweepDays, onPage: onPage)
        case .backfill(let filter):
            try scanBackfill(filter, onPage: onPage)
        }
        return try ScanCursors(connection: connection).dueCount(runId: runId)
    }

    /// The instants the due phases compare with: the window [from, to] around the as-of, and the rows verified
    /// before which are asked again (`--min-recheck`; for revoked rows, `--recheck-revoked` when longer).
    struct DueBounds {
        let asOf: Date
        let from: Date
        let to: Date
        let recheckBefore: Date
        let revokedRecheckBefore: Date

        init(asOf: Date, lookahead: Double, lookback: Double, minRecheck: Double, recheckRevoked: Double) {
            self.asOf = asOf
            from = asOf.addingTimeInterval(-lookback)
            to = asOf.addingTimeInterval(lookahead)
            recheckBefore = asOf.addingTimeInterval(-minRecheck)
            revokedRecheckBefore = asOf.addingTimeInterval(-max(recheckRevoked, minRecheck))
        }
    }

    /// A page query of the scan: its SQL (over `pageColumns`, `$1` the run), its parameters, the most rows it
    /// reads and, in the sweep, the quota left before it.
    private struct PageQuery {
        var sql: String
        var params: [(any PostgresEncodable)?]
        var limit: Int
        var remaining: Int64? = nil
    }

    /// What a page did: the rows it read, the items it inserted (a row already selected is not) and its last
    /// row in keyset order, the next cursor.
    private struct ScannedPage {
        let rows: Int
        let inserted: Int
        let lastId: Int64?
        let lastExpiresAt: Date?
        let lastVerifiedAt: Date?
    }

    /// Runs `page` in a transaction of its own until it returns true (the scan is complete), telling `onPage`
    /// the run's item count after each.
    private func scanPages(onPage: (Int) -> Void, _ page: (PostgresConnection) throws -> Bool) throws {
        while true {
            let finished = try connection.transaction(page)
            onPage(try ScanCursors(connection: connection).dueCount(runId: runId))
            if finished { return }
        }
    }

    /// Copies the rows of `query` into the run's items with `reason` (`ON CONFLICT DO NOTHING`: a row selected
    /// before is not selected again), in the same statement that reads the page, and returns what it did.
    private func insertPage(_ conn: PostgresConnection, _ query: PageQuery, reason: DueReason) throws -> ScannedPage {
        let page = try conn.queryFirst(
            """
            WITH page AS (\(query.sql)
            ), inserted AS (
                \(Self.insertColumns)
                SELECT $1, id, original_transaction_id, user_id, state, expires_at, product_id, auto_renew,
                       subscription_group_id, '\(reason.rawValue)'
                  FROM page
                ON CONFLICT (run_id, subscription_id) DO NOTHING
                RETURNING 1
            ), last AS (
                SELECT expires_at, last_verified_at, id FROM page
                 ORDER BY \(Self.pageOrder(reason)) LIMIT 1
            )
            SELECT (SELECT count(*) FROM page) AS page_rows,
                   (SELECT count(*) FROM inserted) AS inserted_rows,
                   (SELECT expires_at FROM last) AS last_expires_at,
                   (SELECT last_verified_at FROM last) AS last_verified_at,
                   (SELECT id FROM last) AS last_id
            """,
            query.params
        )
        return ScannedPage(
            rows: try page?.decode("page_rows") ?? 0,
            inserted: try page?.decode("inserted_rows") ?? 0,
            lastId: try page?.decode("last_id", as: Int64?.self),
            lastExpiresAt: try page?.decode("last_expires_at", as: Date?.self),
            lastVerifiedAt: try page?.decode("last_verified_at", as: Date?.self)
        )
    }

    /// The items a page selects, with their "previous" values.
    private static let insertColumns = """
        INSERT INTO reconciliation_items (run_id, subscription_id, original_transaction_id, user_id, previous_state,
                                          previous_expires_at, previous_product_id, previous_auto_renew,
                                          subscription_group_id, due_reason)
        """

    /// The keyset order of a page, descending (its first row is the cursor).
    private static func pageOrder(_ reason: DueReason) -> String {
        switch reason {
        case .window: return "expires_at DESC, id DESC"
        case .sweep: return "last_verified_at DESC, id DESC"
        default: return "id DESC"
        }
    }

    /// The columns every page reads from `subscriptions s`, and when its row was last verified (the sweep's keyset
    /// needs it; the other phases page on `subscriptions` alone and read NULL).
    private static func pageColumns(lastVerifiedAt: String = "NULL::timestamptz") -> String {
        """
        s.id, s.original_transaction_id, s.user_id, s.state, s.expires_at, s.product_id, s.auto_renew,
        s.subscription_group_id, \(lastVerifiedAt) AS last_verified_at
        """
    }

    /// "Row `s`'s bookkeeping allows `condition`" (on its `subscription_checks c`; a row with no checks row, never
    /// verified, is allowed), as one probe of subscription_checks_pkey per row the phase's own index yields
    /// (sql/018_subscription_checks.sql). `OFFSET 0` keeps it a per-row subplan, and the scalar compared with
    /// `IS DISTINCT FROM` on purpose: as a join PostgreSQL weighs the probes so heavily that the outer scan's cost
    /// no longer tells its plans apart (it took a Seq Scan of subscriptions), and as `NOT EXISTS` it halves its
    /// estimate of the rows that pass, so a window larger than a page looked smaller and was read whole and sorted
    /// on every page; this form is estimated as passing most rows, as the filter on the row itself was before, and
    /// each phase keeps reading its index in keyset order (docs/architecture.md, "Database work per subscription";
    /// `DueScanPlanTests` holds the plans).
    static func checksAllow(_ condition: String) -> String {
        """
        (SELECT 1 FROM subscription_checks c
          WHERE c.subscription_id = s.id AND (\(condition)) IS NOT TRUE OFFSET 0) IS DISTINCT FROM 1
        """
    }

    // MARK: - The due scan

    /// The nightly selection, phase by phase (`DueReason.duePhases`):
    /// phase 1, rows never verified (id order through subscriptions_pkey, each row probing subscription_checks_pkey:
    /// a row never verified has no checks row, so no index holds these rows alone; the phase reads the whole table
    /// once a night, docs/architecture.md "Database work per subscription");
    /// phase 2, the expiry window (expires_at, id order, partial index subscriptions_due_idx);
    /// phase 3, revoked rows the app changed since the reconciler verified them (`version` moved past
    /// `verified_version`), or verified longer ago than the recheck interval (id order, partial index
    /// subscriptions_revoked_idx): a customer can buy again after a refund.
    /// The cursor records the phase, so a run killed mid-scan resumes in the right one (a run stored by an
    /// older build, stopped in the window phase, goes on to the revoked phase); items are inserted
    /// ON CONFLICT DO NOTHING, so a row in two phases is selected once.
    /// Phases 2 and 3 leave out a row whose last verification was a rejection until its `next_check_at`
    /// (written by the rejection, RejectedRecheckSchedule), unless the app changed the row since
    /// (sql/005_rejected_recheck.sql). Phase 1 never sees such a row (it has been verified). When the scan
    /// completes, the rows left out this way are counted on the run row for the report.
    /// Phase 4, the sweep (docs/architecture.md, "The sweep"): when it starts, the run counts the verified,
    /// non-revoked rows and stores ceil(count / sweepDays) as its quota (on the run row for the report,
    /// and as `remaining` in the cursor); it then takes the least recently verified of them not already
    /// selected, (last_verified_at, id) order through subscription_checks_sweep_idx
    /// (sql/018_subscription_checks.sql; revoked rows are read there and left out by the join), still
    /// honouring --min-recheck and the rejected schedule, until the quota is spent.
    private func scanDue(_ bounds: DueBounds, sweepDays: Double, onPage: (Int) -> Void) throws {
        let phases = sweepDays > 0 ? DueReason.duePhases : DueReason.duePhases.filter { $0 != .sweep }
        try scanPages(onPage: onPage) { conn in
            let cursors = ScanCursors(connection: conn)
            guard let cursor = try cursors.lockDue(runId: runId) else { return true }
            let query = try duePageQuery(after: cursor, bounds, sweepDays: sweepDays, cursors: cursors)
            let page = try insertPage(conn, query, reason: cursor.phase)
            let (next, completed) = Self.advance(cursor, after: page, of: query, phases: phases)
            if completed {
                try cursors.countNotDueRejected(
                    runId: runId,
                    asOf: bounds.asOf,
                    from: bounds.from,
                    to: bounds.to,
                    recheckBefore: bounds.recheckBefore,
                    revokedRecheckBefore: bounds.revokedRecheckBefore
                )
            }
            CrashPoints.reach("scan-page")
            try cursors.storeDue(runId: runId, next, inserted: page.inserted, completed: completed)
            return completed
        }
    }

    /// The page query of `cursor`'s phase, from its keyset cursor. The sweep's first page counts its quota
    /// (`ScanCursors.startSweep`); its pages stop at the quota left.
    private func duePageQuery(
        after cursor: ScanCursors.Due,
        _ bounds: DueBounds,
        sweepDays: Double,
        cursors: ScanCursors
    ) throws -> PageQuery {
        let cursorId = cursor.id ?? 0
        let limit = Int64(pageSize)
        switch cursor.phase {
        case .unverified:
            return PageQuery(sql: Self.unverifiedPageSQL, params: [runId, cursorId, limit], limit: pageSize)
        case .revoked:
            return PageQuery(
                sql: Self.revokedPageSQL,
                params: [runId, cursorId, bounds.revokedRecheckBefore, limit, bounds.asOf],
                limit: pageSize
            )
        case .sweep:
            let left = try cursor.remaining ?? cursors.startSweep(runId: runId, sweepDays: sweepDays)
            let sweepLimit = max(0, min(limit, left))
            let cursorVerified = cursor.verifiedAt ?? Date.distantPast
            return PageQuery(
                sql: Self.sweepPageSQL,
                params: [runId, bounds.recheckBefore, cursorVerified, cursorId, sweepLimit, bounds.asOf],
                limit: Int(sweepLimit),
                remaining: left
            )
        case .window, .notification, .backfill:
            // The window (a cursor never holds the other two: they are not scan phases).
            let cursorExpires = cursor.expiresAt ?? Date.distantPast
            return PageQuery(
                sql: Self.windowPageSQL,
                params: [
                    runId, bounds.from, bounds.to, bounds.recheckBefore, cursorExpires, cursorId, limit, bounds.asOf,
                ],
                limit: pageSize
            )
        }
    }

    /// The cursor after `page`, and whether the scan is complete: a phase is done when its page came short
    /// (or the sweep's quota is spent); the next phase then starts from its beginning, and after the last one
    /// (or an empty page) the scan is complete.
    private static func advance(
        _ cursor: ScanCursors.Due,
        after page: ScannedPage,
        of query: PageQuery,
        phases: [DueReason]
    ) -> (next: ScanCursors.Due, completed: Bool) {
        let remaining = query.remaining.map { $0 - Int64(page.inserted) }
        let phaseDone = page.rows < query.limit || (remaining.map { $0 <= 0 } ?? false)
        let following = phases.firstIndex(of: cursor.phase).map { $0 + 1 }
            .flatMap { $0 < phases.count ? phases[$0] : nil }
        if phaseDone, let following {
            return (ScanCursors.Due(phase: following), false)
        }
        let next = ScanCursors.Due(
            phase: cursor.phase,
            id: page.lastId,
            expiresAt: cursor.phase == .window ? page.lastExpiresAt : nil,
            verifiedAt: cursor.phase == .sweep ? page.lastVerifiedAt : nil,
            remaining: remaining
        )
        return (next, phaseDone || page.lastId == nil)
    }

    /// A page of the unverified phase: $2 keyset cursor (id), $3 limit.
    public static let unverifiedPageSQL = """
        SELECT \(pageColumns())
          FROM subscriptions s
         WHERE s.id > $2 AND \(checksAllow("c.last_verified_at IS NULL"))
         ORDER BY s.id
         LIMIT $3
        """

    /// A page of the revoked phase: $2 keyset cursor (id), $3 recheck bound, $4 limit, $5 as-of.
    public static let revokedPageSQL = """
        SELECT \(pageColumns())
          FROM subscriptions s
         WHERE s.state = 'revoked' AND s.id > $2
           AND \(checksAllow(revokedDue))
         ORDER BY s.id
         LIMIT $4
        """

    /// A revoked row is due when the app changed it since the reconciler verified it, or it was verified before the
    /// recheck bound ($3), and the rejected schedule allows it ($5 the as-of).
    private static let revokedDue =
        "(s.version IS DISTINCT FROM c.verified_version OR c.last_verified_at IS NULL OR c.last_verified_at < $3)"
        + " AND \(rejectedScheduleAllows("$5"))"

    /// A page of the window: $2/$3 the window, $4 --min-recheck bound, $5/$6 keyset cursor (expires_at, id),
    /// $7 limit, $8 as-of.
    public static let windowPageSQL = """
        SELECT \(pageColumns())
          FROM subscriptions s
         WHERE s.state IS DISTINCT FROM 'revoked'
           AND s.expires_at >= $2 AND s.expires_at <= $3
           AND (s.expires_at, s.id) > ($5::timestamptz, $6::bigint)
           AND \(checksAllow(windowDue))
         ORDER BY s.expires_at, s.id
         LIMIT $7
        """

    /// A row in the window is due when it was not verified since the --min-recheck bound ($4) and the rejected
    /// schedule allows it ($8 the as-of).
    private static let windowDue =
        "(c.last_verified_at IS NULL OR c.last_verified_at < $4) AND \(rejectedScheduleAllows("$8"))"

    /// A page of the sweep: $1 run, $2 --min-recheck bound, $3/$4 keyset cursor (last_verified_at, id),
    /// $5 limit, $6 as-of. Rows the run already selected are skipped, so the quota counts new items only. Only
    /// verified rows, in the order of subscription_checks_sweep_idx, each joined to its subscription by one probe of
    /// subscriptions_pkey (a lateral subquery with `OFFSET 0`: as a plain join PostgreSQL hashed both tables and
    /// sorted them on every page).
    public static let sweepPageSQL = """
        SELECT \(pageColumns(lastVerifiedAt: "c.last_verified_at"))
          FROM subscription_checks c
         CROSS JOIN LATERAL (SELECT * FROM subscriptions s WHERE s.id = c.subscription_id OFFSET 0) s
         WHERE c.last_verified_at IS NOT NULL AND c.last_verified_at < $2
           AND (c.last_verified_at, c.subscription_id) > ($3::timestamptz, $4::bigint)
           AND s.state IS DISTINCT FROM 'revoked'
           AND \(rejectedScheduleAllows("$6"))
           AND \(notSelectedByTheRun("$1"))
         ORDER BY c.last_verified_at, c.subscription_id
         LIMIT $5
        """

    /// The rows the sweep spreads over its nights: verified and not revoked.
    public static let sweepEligibleSQL = """
        SELECT count(*) AS n
          FROM subscriptions s
          JOIN subscription_checks c ON c.subscription_id = s.id
         WHERE s.state IS DISTINCT FROM 'revoked' AND c.last_verified_at IS NOT NULL
        """

    /// The schedule of rejected rows as a condition on `subscriptions s` and its `subscription_checks c`: no
    /// schedule, its time has come (`asOfParam` is the run's as-of), or the app changed the row since the reconciler
    /// wrote it.
    static func rejectedScheduleAllows(_ asOfParam: String) -> String {
        "(c.next_check_at IS NULL OR c.next_check_at <= \(asOfParam) OR s.version IS DISTINCT FROM c.verified_version)"
    }

    /// The rows the due phases would have selected but for the rejected schedule, and the earliest next check
    /// among them, stored on the run row (the report's "not due (rejected, next check on DATE)"). Reads the
    /// rows with a schedule through subscription_checks_next_check_idx (sql/018_subscription_checks.sql), each
    /// with its subscription through subscriptions_pkey.
    public static let notDueRejectedSQL = """
        SELECT count(*) AS n, min(c.next_check_at) AS next
          FROM subscription_checks c
          JOIN subscriptions s ON s.id = c.subscription_id
         WHERE c.next_check_at > $2 AND s.version IS NOT DISTINCT FROM c.verified_version
           AND ((s.state IS DISTINCT FROM 'revoked' AND s.expires_at >= $3 AND s.expires_at <= $4
                 AND (c.last_verified_at IS NULL OR c.last_verified_at < $5))
                OR (s.state = 'revoked' AND (c.last_verified_at IS NULL OR c.last_verified_at < $6)))
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

    // MARK: - The backfill scan

    /// Backfill: the filters of `BackfillFilter`, keyset on id. Explicit id lists are checked first:
    /// ids with no subscription are an error naming them (nothing is selected then).
    private func scanBackfill(_ filter: BackfillFilter, onPage: (Int) -> Void) throws {
        if let ids = filter.originalTransactionIds { try requireSubscriptions(ids, idsFile: filter.idsFile) }
        let query = backfillPageQuery(filter)
        try scanPages(onPage: onPage) { conn in
            let cursors = ScanCursors(connection: conn)
            guard let cursor = try cursors.lockBackfill(runId: runId) else { return true }
            var fromCursor = query
            fromCursor.params[fromCursor.params.count - 1] = cursor.id ?? 0
            let page = try insertPage(conn, fromCursor, reason: .backfill)
            let done = page.rows < query.limit
            CrashPoints.reach("scan-page")
            try cursors.storeBackfill(
                runId: runId,
                ScanCursors.Backfill(id: page.lastId),
                inserted: page.inserted,
                completed: done
            )
            return done
        }
    }

    /// Throws a `UsageError` naming the first 20 of `ids` that have no subscription row.
    private func requireSubscriptions(_ ids: [String], idsFile: String?) throws {
        let known = try connection.query(
            "SELECT original_transaction_id FROM subscriptions WHERE original_transaction_id = ANY($1::text[])",
            [ids.map { Optional($0) }]
        )
        let knownSet = Set(try known.map { try $0.decode("original_transaction_id", as: String.self) })
        let unknown = ids.filter { !knownSet.contains($0) }
        guard !unknown.isEmpty else { return }
        let shown = unknown.prefix(20).joined(separator: ", ")
        let more = unknown.count > 20 ? " and \(unknown.count - 20) more" : ""
        throw UsageError(
            "\(unknown.count) original_transaction_id(s) have no subscription row: \(shown)\(more)"
                + (idsFile.map { " (from \($0) or the command line)" } ?? "")
        )
    }

    /// A backfill's page query: every filter given (AND), keyset on id; its last parameter is the cursor,
    /// set for each page.
    private func backfillPageQuery(_ filter: BackfillFilter) -> PageQuery {
        var conditions: [String] = []
        var params: [(any PostgresEncodable)?] = [runId]
        func add(_ value: any PostgresEncodable, _ sql: (String) -> String) {
            params.append(value)
            conditions.append(sql("$\(params.count)"))
        }
        if let ids = filter.originalTransactionIds {
            add(ids.map { Optional($0) }) { "s.original_transaction_id = ANY(\($0)::text[])" }
        }
        if let users = filter.userIds { add(users.map { Optional($0) }) { "s.user_id = ANY(\($0)::text[])" } }
        if let products = filter.productIds {
            add(products.map { Optional($0) }) { "s.product_id = ANY(\($0)::text[])" }
        }
        if let from = filter.expiresFrom { add(from) { "s.expires_at >= \($0)" } }
        if let to = filter.expiresTo { add(to) { "s.expires_at < \($0)" } }
        if let states = filter.states {
            let orUnknown = states.contains("unknown") ? " OR s.state IS NULL" : ""
            add(states.filter { $0 != "unknown" }.map { Optional($0) }) { "(s.state = ANY(\($0)::text[])\(orUnknown))" }
        }
        let whereSQL = conditions.isEmpty ? "" : " AND " + conditions.joined(separator: " AND ")
        params.append(Int64(pageSize))
        let limitParam = "$\(params.count)"
        params.append(Int64(0))
        let cursorParam = "$\(params.count)"
        let sql = """
            SELECT \(Self.pageColumns())
              FROM subscriptions s
             WHERE s.id > \(cursorParam)\(whereSQL)
             ORDER BY s.id
             LIMIT \(limitParam)
            """
        return PageQuery(sql: sql, params: params, limit: pageSize)
    }
}
