import CivilTime
import Foundation
import Postgres
import Reconciler
import TestSupport

/// A fresh database with every sql/*.sql migration applied, and helpers to put subscriptions and runs in
/// it: for tests of RunStore and RunScanner against a real PostgreSQL (no Apple, no binaries).
final class StoreWorld {
    static let asOf = RFC3339.parse("2026-11-21T02:30:00Z")!
    static let product = "com.example.renewals.pro.monthly"

    let database: TestDatabase
    /// For setting up and checking; the stores get connections of their own.
    let connection: PostgresConnection
    private var extraConnections: [PostgresConnection] = []

    init() throws {
        database = try TestDatabase.make()
        connection = try database.connect()
        let sql = EndToEndFixture.packageRoot.appendingPathComponent("sql").path
        for file in try MigrationDirectory(path: sql).files() {
            try connection.executeScript(try String(contentsOfFile: file.path, encoding: .utf8))
        }
    }

    deinit {
        for extra in extraConnections { extra.close() }
        connection.close()
        database.drop()
    }

    /// Days from `asOf`.
    static func day(_ days: Double) -> Date { asOf.addingTimeInterval(days * 86_400) }

    /// Inserts a subscription (no trigger runs on INSERT, so `version` is as given), with a `subscription_checks`
    /// row holding `lastVerifiedAt` and `verifiedVersion` when either is given (a row the reconciler wrote).
    @discardableResult
    func insertSubscription(
        _ otid: String,
        expiresAt: Date?,
        state: String? = nil,
        productId: String = StoreWorld.product,
        receipt: String = "QUJDRA==",
        lastVerifiedAt: Date? = nil,
        version: Int64 = 1,
        verifiedVersion: Int64? = nil,
        autoRenew: Bool? = nil,
        environment: String? = "Production"
    ) throws -> Int64 {
        let row = try connection.queryFirst(
            """
            WITH s AS (
                INSERT INTO subscriptions (user_id, product_id, original_transaction_id, latest_receipt, expires_at,
                                           state, version, auto_renew, environment)
                VALUES ($1, $2, $3, $4, $5, $6, $8, $10, $11)
                RETURNING id
            ), c AS (
                INSERT INTO subscription_checks (subscription_id, last_verified_at, verified_version)
                SELECT id, $7, $9 FROM s WHERE $7::timestamptz IS NOT NULL OR $9::bigint IS NOT NULL
            )
            SELECT id FROM s
            """,
            [
                "user-" + otid, productId, otid, receipt, expiresAt, state, lastVerifiedAt, version, verifiedVersion,
                autoRenew, environment,
            ]
        )
        guard let id: Int64 = try row?.decode("id") else { throw FixtureError("no id for \(otid)") }
        return id
    }

    /// A `running` nightly run as of `asOf`; returns its id.
    func createRun(asOf: Date = StoreWorld.asOf, scanCursor: String? = nil) throws -> Int64 {
        let row = try connection.queryFirst(
            """
            INSERT INTO reconciliation_runs (mode, status, as_of, scan_cursor)
            VALUES ('nightly', 'running', $1, $2::jsonb)
            RETURNING id
            """,
            [asOf, scanCursor]
        )
        guard let id: Int64 = try row?.decode("id") else { throw FixtureError("no run id") }
        return id
    }

    /// A run whose pending items are `subscriptionIds` (as the scan would have written them).
    func createRun(items subscriptionIds: [Int64]) throws -> Int64 {
        let runId = try createRun()
        try connection.execute(
            """
            INSERT INTO reconciliation_items (run_id, subscription_id, original_transaction_id, user_id, previous_state,
                                              previous_expires_at, previous_product_id, previous_auto_renew)
            SELECT $1, id, original_transaction_id, user_id, state, expires_at, product_id, auto_renew
              FROM subscriptions WHERE id = ANY($2::bigint[])
            """,
            [runId, subscriptionIds.map { Optional($0) }]
        )
        try connection.execute(
            "UPDATE reconciliation_runs SET due_count = $2, scan_completed = true WHERE id = $1",
            [runId, Int64(subscriptionIds.count)]
        )
        return runId
    }

    /// A RunStore for `runId` on connections of its own, verifying as of `asOf`.
    func store(runId: Int64, dryRun: Bool = false, verifiedAt: Date = StoreWorld.asOf) throws -> RunStore {
        let write = try database.connect()
        let read = try database.connect()
        extraConnections += [write, read]
        return RunStore(
            connection: write,
            readConnection: read,
            runId: runId,
            dryRun: dryRun,
            verifiedAt: verifiedAt,
            connectionRetries: 0
        )
    }

    /// The subscription ids a due scan of a new run as of `asOf` selects (no sweep unless `sweepDays` says).
    func dueSelection(
        asOf: Date = StoreWorld.asOf,
        recheckRevoked: Double = Selection.defaultRecheckRevokedSeconds,
        sweepDays: Double = 0,
        pageSize: Int = 5000
    ) throws -> Set<Int64> {
        let runId = try createRun(asOf: asOf)
        try RunScanner(connection: connection, runId: runId, asOf: asOf, pageSize: pageSize).scan(
            .due(
                lookaheadSeconds: 86_400,
                lookbackSeconds: 60 * 86_400,
                minRecheckSeconds: 20 * 3600,
                recheckRevokedSeconds: recheckRevoked,
                sweepDays: sweepDays
            )
        )
        return try selected(runId: runId)
    }

    /// The subscription ids run `runId` selected.
    func selected(runId: Int64) throws -> Set<Int64> {
        Set(
            try connection.query("SELECT subscription_id FROM reconciliation_items WHERE run_id = $1", [runId])
                .map { try $0.decode("subscription_id", as: Int64.self) }
        )
    }

    /// One item of run `runId`.
    func item(runId: Int64, subscriptionId: Int64) throws -> PostgresRow {
        guard
            let row = try connection.queryFirst(
                """
                SELECT status, outcome, reason, new_state, new_expires_at, product_id, apple_status,
                       expiry_moved_backwards
                  FROM reconciliation_items WHERE run_id = $1 AND subscription_id = $2
                """,
                [runId, subscriptionId]
            )
        else { throw FixtureError("no item \(subscriptionId) in run \(runId)") }
        return row
    }

    /// One subscription row, with the reconciler's bookkeeping (`subscription_checks`, NULLs when it has none).
    func subscription(_ id: Int64) throws -> PostgresRow {
        guard
            let row = try connection.queryFirst(
                """
                SELECT state, expires_at, product_id, latest_receipt, auto_renew, last_verified_at, last_verify_status,
                       last_apple_status, last_error, expiration_intent, version, verified_version, rejected_count,
                       next_check_at
                  FROM subscriptions LEFT JOIN subscription_checks ON subscription_id = id
                 WHERE id = $1
                """,
                [id]
            )
        else { throw FixtureError("no subscription \(id)") }
        return row
    }
}
