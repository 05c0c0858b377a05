import Foundation
import Postgres
import ReceiptDomain

/// The pipeline's database side for one run: reads pending items with their subscription rows and
/// writes each batch of results in one transaction (subscriptions, ledger, items, run counters).
///
/// Safety rules enforced here, not only in the engine:
/// - a row is written only if its `version` is the one read (else the item is a `conflict` and the
///   row is left exactly as the app wrote it): newer data from the app is never overwritten;
/// - otherwise Apple's verified answer is the truth: the decision's expiry, product and state are written as
///   they are, an earlier expiry included (recorded on the item as `expiry_moved_backwards` with its reason);
/// - the app's row is updated only when a column the app reads changes; the reconciler's bookkeeping (when and
///   how it verified the row) goes to `subscription_checks` (sql/018_subscription_checks.sql), whose
///   `verified_version` is the row's `version` after the write (bumped by the trigger if the row was updated), so
///   a later change by the app shows as `version <> verified_version`;
/// - ledger rows are inserted idempotently (`ON CONFLICT (transaction_id)`), a later refund updates them;
/// - a dry run writes only the run's own tables;
/// - one unstorable value never fails the run: values PostgreSQL cannot hold are found before writing
///   (`StorableValueCheck`), and a batch the database still refuses is written again item by item, each in
///   its own transaction; an item whose own write fails is recorded as `rejected` (`implausible_value`,
///   naming what was refused), its subscription row untouched. Only an item's bare bookkeeping failing
///   stops the run.
///
/// Threading: two `PostgresConnection`s, one for reads (used only from the pipeline's read queue) and
/// one for writes (only from its write queue).
public final class RunStore: PipelineStore, @unchecked Sendable {
    public let runId: Int64
    public let dryRun: Bool
    /// Stored as `subscription_checks.last_verified_at`.
    public let verifiedAt: Date
    private let connection: PostgresConnection
    private let readConnection: PostgresConnection
    /// Database retries of one batch after a lost connection (the server restarting, a failover).
    private let connectionRetries: Int
    /// Read each item's ledger with it (the App Store Server API source decides from it, docs/architecture.md).
    public var loadsLedger = false
    /// When a rejected row is asked again: a rejection writes `rejected_count` and `next_check_at` from it
    /// (docs/architecture.md, sql/005_rejected_recheck.sql).
    public var rejectedRecheck = RejectedRecheckSchedule()
    /// Send every ledger row of a decision, even when its digest says nothing changed (a backfill: the way to
    /// write a ledger again after repairing it by hand). Otherwise unchanged ledgers are skipped
    /// (docs/architecture.md, "Database work per subscription").
    public var writesUnchangedLedgers = false
    /// A worker's lease (docs/architecture.md, "Workers"): pending items are read chunk by chunk from the chunks
    /// this worker claims (`SKIP LOCKED`, leased until its lease runs out) instead of in id order, and a result is
    /// written only while its chunk is still leased to this worker. Nil for a one-process run.
    public var lease: WorkerLease?
    /// The run's `resume_count` when this process took the run (created, resumed or joined it): a batch is written
    /// only while the run is still `running` with that count, in the batch's own transaction, so a process that
    /// lost its run lock (a database restart, another process resuming the run) writes nothing more
    /// (docs/architecture.md, "The run lock"). Nil: not checked (tests of the store alone).
    public var ownerResumeCount: Int64?
    /// Where each batch records the requests to Apple so far (docs/architecture.md, "Requests counted with each
    /// batch"); nil: not recorded.
    public var statsTarget: StatsTarget?

    /// Where a batch's request statistics go, with what earlier parts of the run counted (`base`).
    public enum StatsTarget: Sendable {
        /// The run's row (`reconciliation_runs.apple_stats`): a one-process run, `base` its earlier sessions.
        case run(base: AppleRequestStats)
        /// The worker's row of its `lease` (`run_workers.apple_stats`), `base` its finished rounds.
        case worker(base: AppleRequestStats)

        var base: AppleRequestStats {
            switch self {
            case .run(let base), .worker(let base): base
            }
        }
    }
    /// A worker's reading (the read queue's, one call at a time): the chunk being read and the last id read in it,
    /// the chunks claimed by this store, and every item handed to the pipeline.
    private var leasedChunk: (range: ClosedRange<Int64>, after: Int64)?
    private var chunksRead: [Int64] = []
    private var handedOut = Set<Int64>()

    public init(
        connection: PostgresConnection,
        readConnection: PostgresConnection,
        runId: Int64,
        dryRun: Bool,
        verifiedAt: Date,
        connectionRetries: Int = 12
    ) {
        self.connection = connection
        self.readConnection = readConnection
        self.runId = runId
        self.dryRun = dryRun
        self.verifiedAt = verifiedAt
        self.connectionRetries = connectionRetries
    }

    public func fetchPending(after subscriptionId: Int64, limit: Int) throws -> [WorkItem] {
        guard let lease else {
            return try readPending(
                "i.subscription_id > $2 ORDER BY i.subscription_id LIMIT $3",
                [runId, subscriptionId, Int64(limit)]
            )
        }
        // A worker reads the pending items of the chunks it claims, chunk after chunk, whatever their ids.
        var items: [WorkItem] = []
        while items.count < limit {
            if leasedChunk == nil {
                let excluding = chunksRead
                guard
                    let range = try withConnectionRetry({
                        try lease.claim(runId: runId, excluding: excluding, readConnection)
                    })
                else { break }
                chunksRead.append(range.lowerBound)
                leasedChunk = (range, range.lowerBound - 1)
            }
            guard let (range, after) = leasedChunk else { break }
            let wanted = limit - items.count
            let page = try readPending(
                "i.subscription_id > $2 AND i.subscription_id <= $3 ORDER BY i.subscription_id LIMIT $4",
                [runId, after, range.upperBound, Int64(wanted)]
            )
            leasedChunk = page.count < wanted ? nil : (range, page.last?.subscriptionId ?? range.upperBound)
            // Never the same item twice in one round (a chunk claimed again while its items are in flight).
            items += page.filter { handedOut.insert($0.subscriptionId).inserted }
        }
        return items
    }

    /// The statement of `readPending` (`filter` on `reconciliation_items i`, `$1` the run).
    static func pendingSQL(_ filter: String) -> String {
        """
        SELECT i.subscription_id, s.id IS NOT NULL AS row_exists, s.version, i.original_transaction_id,
               s.user_id, s.product_id, s.bundle_id, s.environment, s.latest_receipt, s.expires_at, s.state,
               s.auto_renew, s.auto_renew_product_id, s.grace_period_expires_at, s.latest_transaction_id,
               s.revoked_at, s.expiration_intent, s.in_billing_retry, s.subscription_group_id,
               c.history_through, i.due_reason, c.ledger_digest, s.price_increase_status, s.app_account_token
          FROM reconciliation_items i
          LEFT JOIN LATERAL (SELECT * FROM subscriptions s WHERE s.id = i.subscription_id OFFSET 0) s ON true
          LEFT JOIN LATERAL (
                SELECT * FROM subscription_checks c WHERE c.subscription_id = i.subscription_id OFFSET 0) c
            ON true
         WHERE i.run_id = $1 AND i.status = 'pending' AND \(filter)
        """
    }

    /// The pending items of the run matching `filter` (on `reconciliation_items i`, with `$1` the run), with their
    /// subscription rows (and ledgers when the source needs them).
    ///
    /// Each page's rows are fetched by id, one index probe per item (`Limit -> Nested Loop Left Join -> Index Only
    /// Scan using reconciliation_items_pending_idx`, then `subscriptions_pkey` and `subscription_checks_pkey`; a
    /// test asserts it): the lateral subqueries keep the planner from a merge join, which read `subscriptions_pkey`
    /// from its first row up to the page for every page, 0.8 s a page at the 700,000th of a million rows.
    private func readPending(_ filter: String, _ parameters: [(any PostgresEncodable)?]) throws -> [WorkItem] {
        let rows = try withConnectionRetry {
            try readConnection.query(Self.pendingSQL(filter), parameters)
        }
        var items = try rows.map { row in
            let otid: String = try row.decode("original_transaction_id")
            let exists: Bool = try row.decode("row_exists")
            let stored = StoredSubscription(
                originalTransactionId: otid,
                userId: try row.decode("user_id", as: String?.self) ?? "",
                productId: try row.decode("product_id", as: String?.self) ?? "",
                bundleId: try row.decode("bundle_id"),
                environment: (try row.decode("environment", as: String?.self)).flatMap(
                    AppleEnvironment.init(appleValue:)
                ),
                expiresAt: try row.decode("expires_at"),
                state: (try row.decode("state", as: String?.self)).flatMap(SubscriptionState.init(rawValue:)),
                autoRenew: try row.decode("auto_renew"),
                autoRenewProductId: try row.decode("auto_renew_product_id"),
                gracePeriodExpiresAt: try row.decode("grace_period_expires_at"),
                latestTransactionId: try row.decode("latest_transaction_id"),
                revokedAt: try row.decode("revoked_at"),
                expirationIntent: (try row.decode("expiration_intent", as: Int?.self)),
                inBillingRetry: try row.decode("in_billing_retry")
            )
            var item = WorkItem(
                subscriptionId: try row.decode("subscription_id"),
                version: try row.decode("version", as: Int64?.self) ?? 0,
                stored: stored,
                receipt: try row.decode("latest_receipt", as: String?.self) ?? "",
                subscriptionGroupId: try row.decode("subscription_group_id"),
                rowExists: exists
            )
            item.historyThrough = try row.decode("history_through")
            item.dueReason = try row.decode("due_reason", as: String?.self).flatMap(DueReason.init(rawValue:))
            item.storedLedgerDigest = try row.decode("ledger_digest")
            item.storedPriceIncreaseStatus = try row.decode("price_increase_status", as: Int?.self)
            item.storedAppAccountToken = try row.decode("app_account_token")
            return item
        }
        if loadsLedger, !items.isEmpty {
            let ledgers = try fetchLedgers(items.map(\.stored.originalTransactionId))
            for index in items.indices {
                items[index].ledger = ledgers[items[index].stored.originalTransactionId] ?? []
            }
        }
        return items
    }

    /// The stored ledger of these subscriptions, as the engine's transactions (one query per page of items).
    private func fetchLedgers(_ originalTransactionIds: [String]) throws -> [String: [ReceiptTransaction]] {
        let rows = try withConnectionRetry {
            try readConnection.query(
                """
                SELECT transaction_id, original_transaction_id, product_id, subscription_group_id,
                       web_order_line_item_id, purchase_date, original_purchase_date, expires_date, is_trial,
                       is_intro_offer, offer, ownership_type, is_upgraded, cancellation_date, cancellation_reason,
                       environment, price_milliunits, currency, storefront, offer_type, offer_discount_type,
                       revocation_type, revocation_percentage, transaction_reason, offer_identifier, offer_period,
                       app_account_token, app_transaction_id, billing_plan_type, signed_transaction IS NOT NULL AS signed
                  FROM subscription_transactions
                 WHERE original_transaction_id = ANY($1::text[])
                """,
                [originalTransactionIds.map { Optional($0) }]
            )
        }
        var byId: [String: [ReceiptTransaction]] = [:]
        for row in rows {
            let otid: String = try row.decode("original_transaction_id")
            let offer: String? = try row.decode("offer")
            let offerType: Int? = try row.decode("offer_type")
            var transaction = ReceiptTransaction(
                transactionId: try row.decode("transaction_id"),
                originalTransactionId: otid,
                productId: try row.decode("product_id"),
                webOrderLineItemId: try row.decode("web_order_line_item_id"),
                subscriptionGroupIdentifier: try row.decode("subscription_group_id"),
                purchaseDate: try row.decode("purchase_date"),
                originalPurchaseDate: try row.decode("original_purchase_date"),
                expiresDate: try row.decode("expires_date"),
                cancellationDate: try row.decode("cancellation_date"),
                cancellationReason: try row.decode("cancellation_reason"),
                isUpgraded: try row.decode("is_upgraded"),
                isTrialPeriod: try row.decode("is_trial"),
                isInIntroOfferPeriod: try row.decode("is_intro_offer"),
                inAppOwnershipType: try row.decode("ownership_type"),
                offerCodeRefName: offerType == 2 ? nil : offer,
                promotionalOfferId: offerType == 2 ? offer : nil
            )
            if try row.decode("signed", as: Bool.self) {
                transaction.signedFacts = SignedTransactionFacts(
                    priceMilliunits: try row.decode("price_milliunits"),
                    currency: try row.decode("currency"),
                    storefront: try row.decode("storefront"),
                    offerType: offerType,
                    offerDiscountType: try row.decode("offer_discount_type"),
                    revocationType: try row.decode("revocation_type"),
                    revocationPercentage: try row.decode("revocation_percentage"),
                    transactionReason: try row.decode("transaction_reason"),
                    environment: (try row.decode("environment", as: String?.self)).flatMap(
                        AppleEnvironment.init(appleValue:)
                    ),
                    offerIdentifier: try row.decode("offer_identifier"),
                    offerPeriod: try row.decode("offer_period"),
                    appAccountToken: try row.decode("app_account_token"),
                    appTransactionId: try row.decode("app_transaction_id"),
                    billingPlanType: try row.decode("billing_plan_type")
                )
            }
            byId[otid, default: []].append(transaction)
        }
        return byId
    }

    public func write(_ results: [ItemResult], stats: AppleRequestStats) throws -> BatchWriteResult {
        // Values PostgreSQL cannot store refuse their item before any statement runs.
        var refused: [Int64: String] = [:]
        let checked = results.map { result -> ItemResult in
            guard let problem = StorableValueCheck.problem(in: result) else { return result }
            let rejected = result.refused(VerdictReason(.implausibleValue, detail: problem))
            refused[result.item.subscriptionId] = rejected.reason
            return rejected
        }
        let skipRows = Set(refused.keys)
        do {
            let wrote = try withConnectionRetry {
                try connection.transaction { conn in
                    try self.writeLocked(checked, skipRows: skipRows, stats: stats, conn)
                }
            }
            CrashPoints.reach("batch-committed")
            return BatchWriteResult(
                conflicts: wrote.conflicts,
                refused: refused,
                notWritten: Set(checked.map(\.item.subscriptionId)).subtracting(wrote.written)
            )
        } catch let error as PostgresError where !error.isConnectionError && !error.isTransactionRetryable {
            // Something in the batch is refused by the database itself: find it item by item. (A deadlock that
            // kept coming back is no verdict on an item: it fails the batch, which the pipeline tries again.)
            var result = BatchWriteResult(refused: refused, batchFailure: Self.safeDescription(error))
            var written = Set<Int64>()
            for item in checked {
                let id = item.item.subscriptionId
                do {
                    let wrote = try withConnectionRetry {
                        try connection.transaction { conn in
                            try self.writeLocked(
                                [item],
                                skipRows: skipRows.contains(id) ? [id] : [],
                                stats: stats,
                                conn
                            )
                        }
                    }
                    result.conflicts.formUnion(wrote.conflicts)
                    written.formUnion(wrote.written)
                } catch let itemError as PostgresError
                    where !itemError.isConnectionError && !itemError.isTransactionRetryable
                {
                    let rejected = item.refused(
                        VerdictReason(
                            .implausibleValue,
                            detail: "PostgreSQL refused this item's write (\(Self.safeDescription(itemError)))"
                        )
                    )
                    // The bare bookkeeping: the item and the run's counters, the subscription row untouched.
                    let wrote = try withConnectionRetry {
                        try connection.transaction { conn in
                            try self.writeLocked([rejected], skipRows: [id], stats: stats, conn)
                        }
                    }
                    written.formUnion(wrote.written)
                    result.refused[id] = rejected.reason
                }
            }
            result.notWritten = Set(checked.map(\.item.subscriptionId)).subtracting(written)
            CrashPoints.reach("batch-committed")
            return result
        }
    }

    /// A database error as it may be recorded and logged: SQLSTATE and the server's primary message, never
    /// its detail (a check violation's detail holds the whole row, receipt included); long runs of base64
    /// characters (a receipt echoed by a trigger's message) are cut out.
    static func safeDescription(_ error: PostgresError) -> String {
        var text = error.sqlState.map { "SQLSTATE \($0): " } ?? ""
        text += error.message
        text = Redactor.shared.redact(StorableValueCheck.storableText(text))
        var out = ""
        var run = ""
        func flushRun() {
            out += run.count >= 40 ? "[…]" : run
            run = ""
        }
        for character in text {
            if character.isASCII && (character.isLetter || character.isNumber || "+/=".contains(character)) {
                run.append(character)
            } else {
                flushRun()
                out.append(character)
            }
        }
        flushRun()
        return out.count > 240 ? String(out.prefix(240)) + "…" : out
    }

    /// `body`, tried again after a lost connection or a rolled-back transaction (`DatabaseRetry`).
    private func withConnectionRetry<T>(_ body: () throws -> T) throws -> T {
        try DatabaseRetry(retries: connectionRetries).run(body)
    }

    /// Writes `results` on `conn` (inside its transaction); the subscription rows of `skipRows` (items the
    /// store refused) are not touched, only their items. Returns the items that ended as conflicts and the items
    /// whose result was written (not those of a lease another worker took, nor an item already done).
    private func writeLocked(
        _ results: [ItemResult],
        skipRows: Set<Int64>,
        stats: AppleRequestStats,
        _ conn: PostgresConnection
    ) throws -> (conflicts: Set<Int64>, written: Set<Int64>) {
        // A worker writes only the items of chunks still leased to it (a lease that ran out went to another
        // worker, whose result is the one kept: exactly one result per item).
        var results = results
        if let lease {
            let held = try lease.lockHeld(runId: runId, results.map(\.item.subscriptionId), conn)
            let lost = results.count - held.count
            results = results.filter { held.contains($0.item.subscriptionId) }
            if lost > 0 { lease.lostResults(lost) }
        }
        var conflicts = Set<Int64>()
        var decided: [(ItemResult, Decision)] = []
        var rejected: [(ItemResult, VerdictReason, Bool)] = []
        for result in results where !skipRows.contains(result.item.subscriptionId) {
            switch result.kind {
            case .decided(let decision): decided.append((result, decision))
            case .rejected(let reason, let invalid):
                if result.item.rowExists { rejected.append((result, reason, invalid)) }
            case .unresolved, .noApp: break
            }
        }

        if !dryRun {
            let digests = decided.map { LedgerDigest.of($0.1.ledger, environment: $0.0.environment?.rawValue) }
            if !decided.isEmpty {
                let updated = try updateDecided(decided, digests: digests, conn)
                for (result, _) in decided where !updated.contains(result.item.subscriptionId) {
                    conflicts.insert(result.item.subscriptionId)
                }
                try EventOutbox(runId: runId, seenAt: verifiedAt).insert(
                    decided.filter { updated.contains($0.0.item.subscriptionId) }.map(Self.change),
                    conn
                )
            }
            if !rejected.isEmpty {
                let updated = try updateRejected(rejected, conn)
                for (result, _, _) in rejected where !updated.contains(result.item.subscriptionId) {
                    conflicts.insert(result.item.subscriptionId)
                }
            }
            // Only ledgers that changed since the reconciler last wrote them (the digest is written with them).
            let ledger = zip(decided, digests).filter { pair, digest in
                !conflicts.contains(pair.0.item.subscriptionId)
                    && (writesUnchangedLedgers || digest != pair.0.item.storedLedgerDigest)
            }.map(\.0)
            try insertLedger(ledger.flatMap { pair in pair.1.ledger.map { (pair.0, $0) } }, conn)
        } else {
            try insertDryRunLedger(decided.flatMap { pair in pair.1.ledger.map { (pair.0, $0) } }, conn)
        }
        // Only items still pending get their result (an item's one result is the first written).
        let written = try updateItems(results, conflicts: conflicts, conn)
        if let lease {
            try lease.finished(runId: runId, Array(written), conn)
            if written.count < results.count { lease.lostResults(results.count - written.count) }
        }
        CrashPoints.reach("batch-write")
        let unresolved = results.filter { $0.outcome == .unresolved && written.contains($0.item.subscriptionId) }.count
        try countBatch(written: written.count, unresolved: unresolved, stats: stats, conn)
        return (conflicts, written)
    }

    /// The batch counted on the run's row (its results, unresolved ones, and the requests to Apple so far, or on the
    /// worker's row), last in the batch's transaction and fenced: the run must still be this process's, else
    /// `RunOwnershipLostError` rolls the whole batch back (docs/architecture.md, "The run lock").
    private func countBatch(written: Int, unresolved: Int, stats: AppleRequestStats, _ conn: PostgresConnection) throws
    {
        var runStats: String?
        if let target = statsTarget {
            var total = target.base
            total.merge(stats)
            switch target {
            case .run: runStats = total.jsonString()
            case .worker: try lease?.recordStats(runId: runId, total, conn)
            }
        }
        // Last, so workers' batches wait for each other only here: the run must still be this process's (a run that
        // marks it interrupted, or resumes it, commits before or after this batch, never beside it).
        let owned = try conn.queryFirst(
            """
            UPDATE reconciliation_runs
               SET done_count = done_count + $2, unresolved_count = unresolved_count + $3, heartbeat_at = now(),
                   apple_stats = COALESCE($4::jsonb, apple_stats)
             WHERE id = $1 AND ($5::bigint IS NULL OR (status = 'running' AND resume_count = $5))
            RETURNING id
            """,
            [runId, Int64(written), Int64(unresolved), runStats, ownerResumeCount]
        )
        // Thrown inside the transaction: nothing of the batch is stored.
        guard owned != nil else { throw RunOwnershipLostError(runId: runId) }
    }

    /// The app's columns `updateDecidedSQL` writes (`s` the stored row, `v` the batch's values): each one's new
    /// value, and when the row changes because of it. The one list both the change test and the UPDATE are made of.
    /// A decided column changes when its new value differs; the receipt when the run sends one (only a receipt
    /// carrying news, `receiptToStore`); a signed payload only when the row had none (Apple signs again on every
    /// call, so a new signature alone is no change, and it is refreshed with the row's next real change).
    private static let appColumns: [(column: String, value: String, changes: String)] = {
        let decided: [(String, String)] = [
            ("state", "v.state"), ("expires_at", "COALESCE(v.expires_at, s.expires_at)"),
            ("product_id", "v.product_id"), ("environment", "COALESCE(v.environment, s.environment)"),
            ("auto_renew", "v.auto_renew"), ("auto_renew_product_id", "v.auto_renew_product_id"),
            ("grace_period_expires_at", "v.grace_period_expires_at"),
            ("expiration_intent", "v.expiration_intent::integer"), ("in_billing_retry", "v.in_billing_retry"),
            ("is_trial", "v.is_trial"), ("is_intro_offer", "v.is_intro_offer"),
            ("subscription_group_id", "COALESCE(v.subscription_group_id, s.subscription_group_id)"),
            ("latest_transaction_id", "COALESCE(v.latest_transaction_id, s.latest_transaction_id)"),
            ("revoked_at", "v.revoked_at"), ("cancellation_reason", "v.cancellation_reason::integer"),
            ("app_account_token", "COALESCE(v.app_account_token, s.app_account_token)"),
            ("app_transaction_id", "COALESCE(v.app_transaction_id, s.app_transaction_id)"),
            ("price_increase_status", "v.price_increase_status::integer"),
            ("renewal_price_milliunits", "v.renewal_price_milliunits"), ("renewal_currency", "v.renewal_currency"),
            ("renewal_billing_plan_type", "v.renewal_billing_plan_type"),
        ]
        return decided.map { column, value in (column, value, "s.\(column) IS DISTINCT FROM \(value)") } + [
            ("latest_receipt", "COALESCE(v.latest_receipt, s.latest_receipt)", "v.latest_receipt IS NOT NULL"),
            (
                "signed_transaction_info", "COALESCE(v.signed_transaction_info, s.signed_transaction_info)",
                "(s.signed_transaction_info IS NULL AND v.signed_transaction_info IS NOT NULL)"
            ),
            (
                "signed_renewal_info", "COALESCE(v.signed_renewal_info, s.signed_renewal_info)",
                "(s.signed_renewal_info IS NULL AND v.signed_renewal_info IS NOT NULL)"
            ),
        ]
    }()

    /// The batch write of `updateDecided`: `$1` the verification time, `$2...$30` one array per column.
    ///
    /// The app's row is updated only when a column the app reads would change (docs/architecture.md, "Database work
    /// per subscription"): `matched` locks the batch's rows still at the version read (`FOR NO KEY UPDATE`, the lock
    /// an UPDATE takes: any write of the app's waits for the batch's commit, and a row it changed meanwhile no longer
    /// matches; unlike `FOR UPDATE` it lets the app insert rows that reference the subscription); `updated` rewrites
    /// those where one of `appColumns` changes; `checked` then records the verification in `subscription_checks` for
    /// every matched row, with the version the row has now (subscriptions_bump_version's bumped one if `updated` wrote
    /// it, the one read if not), so "the app changed the row since we verified it" stays `version IS DISTINCT FROM
    /// verified_version`. The ids returned are the matched rows; every other one is a conflict, nothing of its result
    /// written.
    private static let updateDecidedSQL = """
        WITH v AS (
            SELECT * FROM unnest($2::bigint[], $3::bigint[], $4::text[], $5::timestamptz[], $6::text[],
                        $7::text[], $8::text[], $9::boolean[], $10::text[], $11::timestamptz[], $12::bigint[],
                        $13::boolean[], $14::boolean[], $15::boolean[], $16::text[], $17::text[], $18::timestamptz[],
                        $19::bigint[], $20::bigint[], $21::text[], $22::text[], $23::timestamptz[], $24::text[],
                        $25::text[], $26::text[], $27::bigint[], $28::bigint[], $29::text[], $30::text[])
                AS v(id, version, latest_receipt, expires_at, state, product_id, environment,
                     auto_renew, auto_renew_product_id, grace_period_expires_at, expiration_intent, in_billing_retry,
                     is_trial, is_intro_offer, subscription_group_id, latest_transaction_id, revoked_at,
                     cancellation_reason, apple_status, signed_transaction_info, signed_renewal_info, history_through,
                     ledger_digest, app_account_token, app_transaction_id, price_increase_status,
                     renewal_price_milliunits, renewal_currency, renewal_billing_plan_type)
        ), matched AS (
            SELECT s.id, s.version,
                   \(appColumns.map(\.changes).joined(separator: "\n                   OR ")) AS changes
              FROM subscriptions s
              JOIN v ON s.id = v.id AND s.version = v.version
               FOR NO KEY UPDATE OF s
        ), updated AS (
            UPDATE subscriptions AS s SET
                \(appColumns.map { "\($0.column) = \($0.value)" }.joined(separator: ",\n                "))
              FROM v JOIN matched m ON m.id = v.id
             WHERE s.id = v.id AND m.changes
            RETURNING s.id, s.version  -- the version subscriptions_bump_version gave the row
        ), checked AS (
            INSERT INTO subscription_checks AS c (subscription_id, last_verified_at, last_verify_status,
                                                  last_apple_status, last_error, rejected_count, next_check_at,
                                                  verified_version, history_through, ledger_digest)
            SELECT m.id, $1, 'ok', v.apple_status, NULL, NULL, NULL, COALESCE(u.version, m.version),
                   v.history_through, v.ledger_digest
              FROM matched m
              JOIN v ON v.id = m.id
              LEFT JOIN updated u ON u.id = m.id
            ON CONFLICT (subscription_id) DO UPDATE SET
                last_verified_at = EXCLUDED.last_verified_at,
                last_verify_status = 'ok',
                last_apple_status = EXCLUDED.last_apple_status,
                last_error = NULL,
                rejected_count = NULL,
                next_check_at = NULL,
                verified_version = EXCLUDED.verified_version,
                history_through = GREATEST(EXCLUDED.history_through, c.history_through),
                ledger_digest = EXCLUDED.ledger_digest
            RETURNING c.subscription_id
        )
        SELECT subscription_id AS id FROM checked
        """

    /// One statement for the whole batch (`updateDecidedSQL`); returns the ids written (version unchanged). Apple's newest
    /// receipt is sent only when it carries what the stored one lacks (`receiptToStore`); otherwise NULL keeps the
    /// stored value: receipts are several kilobytes, stored out of line (TOAST), and a kept one is not written again.
    private func updateDecided(
        _ decided: [(ItemResult, Decision)],
        digests: [String],
        _ conn: PostgresConnection
    ) throws -> Set<Int64> {
        let rows = try conn.query(
            Self.updateDecidedSQL,
            [
                verifiedAt,
                decided.map { Optional($0.0.item.subscriptionId) },
                decided.map { Optional($0.0.item.version) },
                zip(decided, digests).map { Self.receiptToStore($0.0, $0.1, digest: $1) },
                decided.map { $0.1.expiresAt },
                decided.map { $0.1.state?.rawValue },
                decided.map { Optional($0.1.productId) },
                decided.map { $0.1.environment?.rawValue ?? $0.0.environment?.rawValue },
                decided.map { $0.1.autoRenew },
                decided.map { $0.1.autoRenewProductId },
                decided.map { $0.1.gracePeriodExpiresAt },
                decided.map { $0.1.expirationIntent.map(Int64.init) },
                decided.map { Optional($0.1.inBillingRetry) },
                decided.map { Optional($0.1.isTrial) },
                decided.map { Optional($0.1.isIntroOffer) },
                decided.map { $0.1.subscriptionGroupIdentifier },
                decided.map { $0.1.latestTransactionId },
                decided.map { $0.1.revokedAt },
                decided.map { $0.1.cancellationReason.map(Int64.init) },
                decided.map { StorableValueCheck.integerOrNull($0.0.appleStatus) },
                decided.map { $0.1.signedTransactionInfo },
                decided.map { $0.1.signedRenewalInfo },
                decided.map { $0.1.historyThrough },
                digests.map { Optional($0) },
                decided.map { $0.1.customer.appAccountToken },
                decided.map { $0.1.customer.appTransactionId },
                decided.map { $0.1.customer.priceIncreaseStatus.map(Int64.init) },
                decided.map { $0.1.customer.renewalPriceMilliunits },
                decided.map { $0.1.customer.renewalCurrency },
                decided.map { $0.1.customer.renewalBillingPlanType },
            ]
        )
        return Set(try rows.map { try $0.decode("id", as: Int64.self) })
    }

    /// The receipt to store for `decision` (nil: keep the stored one). verifyReceipt hands back a newly issued
    /// receipt on every call, but a receipt holding the same transactions verifies to the same answer: it is stored
    /// only when the row has none, or it carries a transaction or change the stored one lacks (the newest
    /// transaction or the ledger's digest differs; docs/architecture.md, "Database work per subscription").
    static func receiptToStore(_ result: ItemResult, _ decision: Decision, digest: String) -> String? {
        guard let receipt = decision.latestReceipt, receipt != result.item.receipt else { return nil }
        let carriesNews =
            result.item.receipt.isEmpty || digest != result.item.storedLedgerDigest
            || decision.latestTransactionId != result.item.stored.latestTransactionId
        return carriesNews ? receipt : nil
    }

    /// Rejections change no entitlement: only the verification bookkeeping in `subscription_checks`, and the
    /// rejected schedule (one more rejection in a row; `next_check_at` from the run's `RejectedRecheckSchedule`).
    /// The app's row is only locked, and only while still at the version read (else the item is a conflict):
    /// `verified_version` is that version, the row itself is not written (docs/architecture.md, "Database work per
    /// subscription").
    private func updateRejected(
        _ rejected: [(ItemResult, VerdictReason, Bool)],
        _ conn: PostgresConnection
    ) throws -> Set<Int64> {
        let rows = try conn.query(
            """
            WITH v AS (
                SELECT * FROM unnest($2::bigint[], $3::bigint[], $4::text[], $5::bigint[], $6::text[])
                    AS v(id, version, status, apple_status, error)
            ), matched AS (
                SELECT s.id, s.version FROM subscriptions s
                  JOIN v ON s.id = v.id AND s.version = v.version
                   FOR NO KEY UPDATE OF s
            )
            INSERT INTO subscription_checks AS c (subscription_id, last_verified_at, last_verify_status,
                                                  last_apple_status, last_error, rejected_count, next_check_at,
                                                  verified_version)
            SELECT m.id, $1, v.status, v.apple_status, v.error, 1,
                   $1::timestamptz + make_interval(
                       secs => ($7::double precision[])[LEAST(1, cardinality($7::double precision[]))]),
                   m.version
              FROM matched m
              JOIN v ON v.id = m.id
            ON CONFLICT (subscription_id) DO UPDATE SET
                last_verified_at = EXCLUDED.last_verified_at,
                last_verify_status = EXCLUDED.last_verify_status,
                last_apple_status = EXCLUDED.last_apple_status,
                last_error = EXCLUDED.last_error,
                rejected_count = LEAST(COALESCE(c.rejected_count, 0), 1000000) + 1,
                next_check_at = EXCLUDED.last_verified_at + make_interval(
                    secs => ($7::double precision[])[LEAST(COALESCE(c.rejected_count, 0) + 1, cardinality($7::double precision[]))]),
                verified_version = EXCLUDED.verified_version
            RETURNING c.subscription_id AS id
            """,
            [
                verifiedAt,
                rejected.map { Optional($0.0.item.subscriptionId) },
                rejected.map { Optional($0.0.item.version) },
                rejected.map { Optional($0.2 ? "invalid_receipt" : "rejected") },
                rejected.map { StorableValueCheck.integerOrNull($0.0.appleStatus) },
                rejected.map { Optional(StorableValueCheck.storableText("\($0.1.code.rawValue): \($0.1)")) },
                rejectedRecheck.offsetsSeconds.map { Optional($0) },
            ]
        )
        return Set(try rows.map { try $0.decode("id", as: Int64.self) })
    }

    /// The change a written decision made, for its events (`EventOutbox`): the stored row before, the decision
    /// after, and what found it (a notification or a backfill's selection, else the run).
    static func change(_ result: ItemResult, _ decision: Decision) -> EventOutbox.Change {
        let source: EventOutbox.Source =
            switch result.item.dueReason {
            case .notification: .notification
            case .backfill: .backfill
            default: .run
            }
        return EventOutbox.Change(
            subscriptionId: result.item.subscriptionId,
            transitions: SubscriptionTransitions(
                before: result.item.stored,
                beforePriceIncreaseStatus: result.item.storedPriceIncreaseStatus,
                after: decision
            ),
            appAccountToken: decision.customer.appAccountToken ?? result.item.storedAppAccountToken,
            source: source
        )
    }

    private func insertLedger(_ entries: [(ItemResult, LedgerEntry)], _ conn: PostgresConnection) throws {
        try LedgerWriter(runId: runId).insert(entries.map { .init(environment: $0.0.environment, entry: $0.1) }, conn)
    }

    private func insertDryRunLedger(_ entries: [(ItemResult, LedgerEntry)], _ conn: PostgresConnection) throws {
        try LedgerWriter(runId: runId).insertDryRun(
            entries.map { .init(environment: $0.0.environment, entry: $0.1) },
            conn
        )
    }

    /// The batch UPDATE of `updateItems`: `$1` the run, `$2...$23` one array per column.
    private static let updateItemsSQL = """
        UPDATE reconciliation_items AS i SET
            status = 'done',
            outcome = v.outcome,
            user_id = COALESCE(v.user_id, i.user_id),
            previous_state = v.previous_state,
            previous_expires_at = v.previous_expires_at,
            previous_product_id = v.previous_product_id,
            previous_auto_renew = v.previous_auto_renew,
            new_state = v.new_state,
            new_expires_at = v.new_expires_at,
            product_id = v.product_id,
            subscription_group_id = COALESCE(v.subscription_group_id, i.subscription_group_id),
            auto_renew = v.auto_renew,
            auto_renew_product_id = v.auto_renew_product_id,
            environment = v.environment,
            apple_status = v.apple_status,
            attempts = i.attempts + v.attempts,
            reason = v.reason,
            expiry_moved_backwards = v.expiry_moved_backwards,
            expiration_intent = v.expiration_intent,
            price_increase_status = v.price_increase_status,
            renewal_price_milliunits = v.renewal_price_milliunits,
            renewal_currency = v.renewal_currency,
            finished_at = now()
        FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::text[],
                    $8::boolean[], $9::text[], $10::timestamptz[], $11::text[], $12::text[], $13::boolean[],
                    $14::text[], $15::text[], $16::bigint[], $17::bigint[], $18::text[], $19::boolean[],
                    $20::bigint[], $21::bigint[], $22::bigint[], $23::text[])
            AS v(subscription_id, outcome, user_id, previous_state, previous_expires_at, previous_product_id,
                 previous_auto_renew, new_state, new_expires_at, product_id, subscription_group_id, auto_renew,
                 auto_renew_product_id, environment, apple_status, attempts, reason, expiry_moved_backwards,
                 expiration_intent, price_increase_status, renewal_price_milliunits, renewal_currency)
        WHERE i.run_id = $1 AND i.subscription_id = v.subscription_id AND i.status = 'pending'
        RETURNING i.subscription_id
        """

    /// Writes each result on its item, if the item is still pending; returns the ids written.
    private func updateItems(
        _ results: [ItemResult],
        conflicts: Set<Int64>,
        _ conn: PostgresConnection
    ) throws -> Set<Int64> {
        guard !results.isEmpty else { return [] }
        func decision(_ r: ItemResult) -> Decision? {
            if case .decided(let d) = r.kind { return d }
            return nil
        }
        /// What the decision says of `r`, nothing for a conflict (the row was left as the app stored it).
        func decided<T>(_ r: ItemResult, _ value: (Decision) -> T?) -> T? {
            conflicts.contains(r.item.subscriptionId) ? nil : decision(r).flatMap(value)
        }
        let rows = try conn.query(
            Self.updateItemsSQL,
            [
                runId,
                results.map { Optional($0.item.subscriptionId) },
                results.map { r -> String? in
                    conflicts.contains(r.item.subscriptionId) ? ItemOutcome.conflict.rawValue : r.outcome.rawValue
                },
                results.map { $0.item.rowExists ? $0.item.stored.userId : nil },
                results.map { $0.item.stored.state?.rawValue },
                results.map { $0.item.stored.expiresAt },
                results.map { $0.item.rowExists ? $0.item.stored.productId : nil },
                results.map { $0.item.stored.autoRenew },
                results.map { decided($0) { $0.state?.rawValue } },
                // What was stored: Apple's expiry as it is (see updateDecided).
                results.map { r in decided(r) { $0.expiresAt ?? r.item.stored.expiresAt } },
                results.map { decided($0) { $0.productId } },
                results.map { decision($0)?.subscriptionGroupIdentifier ?? $0.item.subscriptionGroupId },
                results.map { decided($0) { $0.autoRenew } },
                results.map { decided($0) { $0.autoRenewProductId } },
                results.map { $0.environment?.rawValue },
                results.map { StorableValueCheck.integerOrNull($0.appleStatus) },
                results.map { Optional(StorableValueCheck.integerOrNull($0.attempts) ?? 0) },
                results.map { r -> String? in
                    conflicts.contains(r.item.subscriptionId)
                        ? "the row changed since it was read (the app stored new data); left as it is, verified again next run"
                        : r.reason.map(StorableValueCheck.storableText)
                },
                results.map { r -> Bool? in
                    conflicts.contains(r.item.subscriptionId) ? false : (decision(r)?.expiryMovedBackwards ?? false)
                },
                results.map { decided($0) { $0.expirationIntent.map(Int64.init) } },
                results.map { decided($0) { $0.customer.priceIncreaseStatus.map(Int64.init) } },
                results.map { decided($0) { $0.customer.renewalPriceMilliunits } },
                results.map { decided($0) { $0.customer.renewalCurrency } },
            ]
        )
        return Set(try rows.map { try $0.decode("subscription_id", as: Int64.self) })
    }
}
