import Foundation
import Postgres
import TestSupport
import Testing

/// sql/018_subscription_checks.sql on a database that has rows: what the reconciler stored on each subscription row
/// moves to `subscription_checks` unchanged, a row it never wrote gets no checks row, and the columns leave
/// `subscriptions`.
@Suite struct SubscriptionChecksMigrationTests {
    @Test func theBookkeepingMovesToSubscriptionChecksAsItWas() async throws {
        let database = try TestDatabase.make()
        defer { database.drop() }
        let files = MigrateTests.sqlFiles
        let checks = try #require(files.firstIndex { $0.lastPathComponent.hasPrefix("018_") })
        for file in files[..<checks] { try await Self.psql(database, file) }
        let conn = try database.connect()
        defer { conn.close() }
        try conn.execute(
            """
            INSERT INTO subscriptions (id, user_id, product_id, original_transaction_id, latest_receipt, state, version,
                                       last_verified_at, last_verify_status, last_apple_status, last_error,
                                       rejected_count, next_check_at, verified_version, history_through, ledger_digest)
            VALUES (1, 'u1', 'p', '1001', 'QUJD', 'active', 3, '2026-11-20T02:00:00Z', 'rejected', 21003, 'refused',
                    2, '2026-11-24T02:00:00Z', 3, '2026-11-19T00:00:00Z', 'v2:abc'),
                   (2, 'u2', 'p', '1002', 'QUJD', 'active', 1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)
            """
        )
        for file in files[checks...] { try await Self.psql(database, file) }

        let moved = try #require(
            try conn.queryFirst(
                """
                SELECT last_verified_at, last_verify_status, last_apple_status, last_error, rejected_count,
                       next_check_at, verified_version, history_through, ledger_digest
                  FROM subscription_checks WHERE subscription_id = 1
                """
            )
        )
        #expect(try moved.decode("last_verify_status", as: String?.self) == "rejected")
        #expect(try moved.decode("last_apple_status", as: Int?.self) == 21003)
        #expect(try moved.decode("last_error", as: String?.self) == "refused")
        #expect(try moved.decode("rejected_count", as: Int?.self) == 2)
        #expect(try moved.decode("verified_version", as: Int64?.self) == 3)
        #expect(try moved.decode("ledger_digest", as: String?.self) == "v2:abc")
        #expect(try moved.decode("last_verified_at", as: Date?.self) != nil)
        #expect(try moved.decode("next_check_at", as: Date?.self) != nil)
        #expect(try moved.decode("history_through", as: Date?.self) != nil)
        #expect(try conn.count("SELECT count(*) AS n FROM subscription_checks") == 1)
        // The app's rows were not updated by the move (no version bump).
        #expect(try conn.count("SELECT count(*) AS n FROM subscriptions WHERE version = 3 AND id = 1") == 1)
        #expect(
            try conn.count(
                """
                SELECT count(*) AS n FROM information_schema.columns
                 WHERE table_name = 'subscriptions'
                   AND column_name IN ('last_verified_at', 'last_verify_status', 'last_apple_status', 'last_error',
                                       'rejected_count', 'next_check_at', 'verified_version', 'history_through',
                                       'ledger_digest')
                """
            ) == 0
        )
        // The view shows every subscription, the one never verified with NULLs.
        let view = try conn.query(
            """
            SELECT subscription_id, last_verify_status, changed_since_verified
              FROM subscription_verification ORDER BY subscription_id
            """
        )
        #expect(view.count == 2)
        #expect(try view[0].decode("changed_since_verified", as: Bool.self) == false)
        #expect(try view[1].decode("last_verify_status", as: String?.self) == nil)
        #expect(try view[1].decode("changed_since_verified", as: Bool.self) == true)
    }

    static func psql(_ database: TestDatabase, _ file: URL) async throws {
        let psql = try await ChildProcess.run(
            "/usr/bin/env",
            ["psql", database.url, "-q", "-X", "-v", "ON_ERROR_STOP=1", "-1", "-f", file.path]
        )
        #expect(psql.status == 0, "\(file.lastPathComponent): \(psql.stderr)")
    }
}
