import Foundation
import Postgres
import Testing

@testable import Reconciler

/// The pipeline's page of pending items with their rows (`RunStore.pendingSQL`): read by id, one probe per item,
/// wherever the page is in the run. A merge join there read `subscriptions_pkey` from its first row up to the page
/// for every page (0.8 s a page at the 700,000th of a million subscriptions; docs/architecture.md, "Database work per
/// subscription").
@Suite struct PendingReadPlanTests {
    @Test func aPageIsReadByIndexProbesNotAJoinFromTheTablesStart() throws {
        let world = try StoreWorld()
        try world.connection.execute(
            """
            INSERT INTO subscriptions (user_id, product_id, original_transaction_id, latest_receipt, expires_at, state)
            SELECT 'user-' || n, 'p', 'otid-' || n, 'QUJDRA==', now(), 'active' FROM generate_series(1, 20000) AS n
            """
        )
        try world.connection.execute(
            """
            INSERT INTO subscription_checks (subscription_id, last_verified_at)
            SELECT id, now() FROM subscriptions WHERE id % 2 = 0
            """
        )
        let runId = try world.createRun()
        try world.connection.execute(
            """
            INSERT INTO reconciliation_items (run_id, subscription_id, original_transaction_id)
            SELECT $1, id, original_transaction_id FROM subscriptions WHERE id % 3 <> 0
            """,
            [runId]
        )
        try world.connection.execute("ANALYZE")
        for filter in [
            "i.subscription_id > 15000 ORDER BY i.subscription_id LIMIT 200",
            "i.subscription_id > 15000 AND i.subscription_id <= 16000 ORDER BY i.subscription_id LIMIT 200",
        ] {
            let plan = try world.connection.query(
                "EXPLAIN " + RunStore.pendingSQL(filter).replacingOccurrences(of: "$1", with: String(runId))
            ).map { try $0.decode("QUERY PLAN", as: String.self) }.joined(separator: "\n")
            #expect(!plan.contains("Merge"), "\(plan)")
            #expect(plan.contains("Nested Loop Left Join"), "\(plan)")
            #expect(plan.contains("Index Cond: (id = i.subscription_id)"), "\(plan)")
            #expect(plan.contains("Index Cond: (subscription_id = i.subscription_id)"), "\(plan)")
        }
        // And what it reads: every item of the page, with its row and its checks row when there is one.
        let rows = try world.connection.query(
            RunStore.pendingSQL("i.subscription_id > 15000 ORDER BY i.subscription_id LIMIT 4"),
            [runId]
        )
        #expect(try rows.map { try $0.decode("subscription_id", as: Int64.self) } == [15001, 15002, 15004, 15005])
        #expect(try rows.allSatisfy { try $0.decode("row_exists", as: Bool.self) })
    }
}
