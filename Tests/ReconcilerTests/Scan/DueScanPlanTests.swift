import CivilTime
import Foundation
import Postgres
import Reconciler
import Testing

/// The nightly due-scan's window page is an index range scan on subscriptions_due_idx, chosen by the
/// planner on its own (statistics from ANALYZE; no enable_* settings touched).
@Suite struct DueScanPlanTests {
    @Test func windowPageQueryUsesTheDueIndexWith20000Rows() async throws {
        let world = try await EndToEndFixture(subscriptions: 0)
        let conn = try world.connect()
        defer { conn.close() }
        // 20,000 verified rows, expiries spread evenly (in shuffled id order) from 90 days ago to 60 days ahead;
        // every 20th is revoked. The default window (60 d back, 24 h ahead) then holds ~7,700 rows: more than
        // one 5,000-row page, the case where the plan matters. (When the whole window is smaller than a page,
        // PostgreSQL prefers a Bitmap Index Scan on the same index plus a small sort: checked below too.)
        try conn.execute(
            """
            INSERT INTO subscriptions (user_id, product_id, original_transaction_id, latest_receipt, expires_at, state)
            SELECT 'user-' || g, 'com.example.renewals.pro.monthly', (1000000000000000 + g)::text, 'QUJD',
                   timestamptz '2026-11-21T02:30:00Z' - interval '90 days' + ((g * 7919) % 20000) * interval '648 seconds',
                   CASE WHEN g % 20 = 0 THEN 'revoked' ELSE 'active' END
              FROM generate_series(1, 20000) AS g
            """
        )
        try conn.execute(
            """
            INSERT INTO subscription_checks (subscription_id, last_verified_at, last_verify_status)
            SELECT id, timestamptz '2026-11-19T00:00:00Z', 'ok' FROM subscriptions
            """
        )
        try Self.analyze(conn)
        let settings = try conn.queryFirst("SELECT current_setting('enable_seqscan') AS s")?.decode(
            "s",
            as: String.self
        )
        #expect(settings == "on")

        let asOf = try #require(RFC3339.parse(EndToEndFixture.defaultNow))
        // The exact shape of RunScanner's window-phase page query (its $1, the run id, is unused here).
        let plan = try explain(conn, asOf: asOf, cursor: Date.distantPast)
        #expect(plan.contains("Index Scan using subscriptions_due_idx on subscriptions"), "\(plan)")
        // Each row of the window probes its checks row, in the window's order (no hash of subscription_checks).
        #expect(plan.contains("Index Scan using subscription_checks_pkey on subscription_checks"), "\(plan)")
        #expect(!plan.contains("Hash"), "\(plan)")
        #expect(!plan.contains("Seq Scan"), "\(plan)")
        #expect(!plan.contains("Sort"), "\(plan)")
        #expect(plan.contains("Index Cond"), "\(plan)")
        // The window really holds more than a page, so the plan was chosen for a real range.
        let inWindow = try conn.count(
            "SELECT count(*) AS n FROM subscriptions WHERE state IS DISTINCT FROM 'revoked' AND expires_at >= $1 AND expires_at <= $2",
            [asOf.addingTimeInterval(-60 * 86_400), asOf.addingTimeInterval(86_400)]
        )
        #expect(inWindow > 5000 && inWindow < 10_000)

        // A later page (cursor mid-window, fewer rows left than a page): still the due index, never a Seq Scan.
        let later = try explain(conn, asOf: asOf, cursor: asOf.addingTimeInterval(-30 * 86_400))
        #expect(later.contains("subscriptions_due_idx"), "\(later)")
        #expect(!later.contains("Seq Scan"), "\(later)")
    }

    /// The revoked phase's page (RunScanner, phase "revoked") reads subscriptions_revoked_idx, never the table.
    @Test func revokedPageQueryUsesTheRevokedIndexWith20000Rows() async throws {
        let world = try await EndToEndFixture(subscriptions: 0)
        let conn = try world.connect()
        defer { conn.close() }
        // 20,000 verified rows, every 20th revoked (1,000), verified on different days; some changed by the app.
        try conn.execute(
            """
            INSERT INTO subscriptions (user_id, product_id, original_transaction_id, latest_receipt, expires_at, state,
                                       version)
            SELECT 'user-' || g, 'com.example.renewals.pro.monthly', (1000000000000000 + g)::text, 'QUJD',
                   timestamptz '2026-11-21T02:30:00Z' - ((g * 7919) % 400) * interval '1 day',
                   CASE WHEN g % 20 = 0 THEN 'revoked' ELSE 'active' END, 2
              FROM generate_series(1, 20000) AS g
            """
        )
        try conn.execute(
            """
            INSERT INTO subscription_checks (subscription_id, last_verified_at, last_verify_status, verified_version)
            SELECT id, timestamptz '2026-11-21T02:30:00Z' - (g % 14) * interval '1 day', 'ok',
                   CASE WHEN g % 60 = 0 THEN 1 ELSE 2 END
              FROM (SELECT id, original_transaction_id::bigint - 1000000000000000 AS g FROM subscriptions) AS x
            """
        )
        try Self.analyze(conn)
        let asOf = try #require(RFC3339.parse(EndToEndFixture.defaultNow))
        for cursor: Int64 in [0, 10_000] {
            // RunScanner's revoked-phase page query ($1 the run, unused by it).
            let plan = try conn.query(
                "EXPLAIN " + RunScanner.revokedPageSQL,
                [Int64(1), cursor, asOf.addingTimeInterval(-7 * 86_400), Int64(5000), asOf]
            ).map { try $0.decode(0, as: String.self) }.joined(separator: "\n")
            #expect(plan.contains("subscriptions_revoked_idx"), "\(plan)")
            #expect(plan.contains("subscription_checks_pkey"), "\(plan)")
            #expect(!plan.contains("Seq Scan"), "\(plan)")
            #expect(!plan.contains("Sort"), "\(plan)")
        }
    }

    /// The unverified phase's page (RunScanner, phase "unverified") reads subscriptions in id order and probes
    /// each row's checks row: one pass over the table a night, never a hash of subscription_checks per page.
    @Test func unverifiedPageQueryProbesTheChecksOfEachRowWith20000Rows() async throws {
        let world = try await EndToEndFixture(subscriptions: 0)
        let conn = try world.connect()
        defer { conn.close() }
        // 20,000 rows, 99 in 100 verified.
        try conn.execute(
            """
            INSERT INTO subscriptions (user_id, product_id, original_transaction_id, latest_receipt, expires_at, state)
            SELECT 'user-' || g, 'com.example.renewals.pro.monthly', (1000000000000000 + g)::text, 'QUJD',
                   timestamptz '2026-11-21T02:30:00Z' + (g % 30) * interval '1 day', 'active'
              FROM generate_series(1, 20000) AS g
            """
        )
        try conn.execute(
            """
            INSERT INTO subscription_checks (subscription_id, last_verified_at, last_verify_status, verified_version)
            SELECT id, timestamptz '2026-11-20T02:30:00Z', 'ok', 1 FROM subscriptions WHERE id % 100 <> 0
            """
        )
        try Self.analyze(conn)
        for cursor: Int64 in [0, 15_000] {
            let plan = try conn.query(
                "EXPLAIN " + RunScanner.unverifiedPageSQL,
                [Int64(1), cursor, Int64(5000)]
            ).map { try $0.decode(0, as: String.self) }.joined(separator: "\n")
            #expect(plan.contains("using subscriptions_pkey on subscriptions"), "\(plan)")
            #expect(plan.contains("Index Scan using subscription_checks_pkey on subscription_checks"), "\(plan)")
            #expect(!plan.contains("Seq Scan"), "\(plan)")
            #expect(!plan.contains("Hash"), "\(plan)")
            #expect(!plan.contains("Sort"), "\(plan)")
        }
    }

    static func analyze(_ conn: PostgresConnection) throws {
        try conn.execute("ANALYZE subscriptions")
        try conn.execute("ANALYZE subscription_checks")
    }

    /// RunScanner's window-phase page query ($1 the run, unused by it).
    private func explain(_ conn: PostgresConnection, asOf: Date, cursor: Date) throws -> String {
        try conn.query(
            "EXPLAIN " + RunScanner.windowPageSQL,
            [
                Int64(1), asOf.addingTimeInterval(-60 * 86_400), asOf.addingTimeInterval(86_400),
                asOf.addingTimeInterval(-20 * 3600), cursor, Int64(0), Int64(5000), asOf,
            ]
        ).map { try $0.decode(0, as: String.self) }.joined(separator: "\n")
    }
}
