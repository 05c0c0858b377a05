import Foundation
import Postgres
import Testing

@testable import Reconciler

/// The report's read of the night's ledger (`ReportLoader.transactionsSQL`): grouped by subscription in the order the
/// window over each subscription's rows already needs, so the ledger is never sorted as a whole, and the app's
/// currency read once per subscription, not once per ledger row (docs/reports.md, "Report files in detail").
@Suite struct ReportReadPlanTests {
    static let subscriptions = 3000
    static let perSubscription = 6

    /// A first night's ledger: every subscription's rows first seen by the run, dated in the weeks before it.
    static func firstNight(_ world: StoreWorld) throws -> Int64 {
        try world.connection.execute(
            """
            INSERT INTO subscriptions (user_id, product_id, original_transaction_id, latest_receipt, expires_at, state,
                                       currency)
            SELECT 'user-' || n, 'p', 'otid-' || n, 'QUJDRA==', now(), 'active', 'EUR'
              FROM generate_series(1, \(subscriptions)) AS n
            """
        )
        let runId = try world.createRun()
        try world.connection.execute(
            """
            INSERT INTO subscription_transactions (transaction_id, original_transaction_id, product_id, kind,
                                                   purchase_date, expires_date, first_seen_run_id)
            SELECT 'tx-' || n || '-' || k, 'otid-' || n, 'p', CASE WHEN k = 1 THEN 'initial' ELSE 'renewal' END,
                   $2::timestamptz - ((\(perSubscription) - k) * 7 + n % 5) * interval '1 day',
                   $2::timestamptz - ((\(perSubscription) - k - 1) * 7 + n % 5) * interval '1 day', $1
              FROM generate_series(1, \(subscriptions)) AS n, generate_series(1, \(perSubscription)) AS k
            """,
            [runId, StoreWorld.asOf]
        )
        try world.connection.execute("ANALYZE")
        return runId
    }

    @Test func theLedgerIsReadGroupedBySubscriptionWithoutAWholeSort() throws {
        let world = try StoreWorld()
        let runId = try Self.firstNight(world)
        let sql = ReportLoader.transactionsSQL(serverAPI: true, catalogPrices: true)
        let since = StoreWorld.asOf.addingTimeInterval(-86_400)
        try world.connection.execute("SET jit = off")
        let plan = try world.connection.query(
            "EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) " + Self.literal(sql, runId: runId, since: since)
        ).map { try $0.decode("QUERY PLAN", as: String.self) }
        let text = plan.joined(separator: "\n")
        // No node sorts the whole ledger: the top is an incremental sort on the window's order, and the only full
        // sort is of the subscriptions' keys.
        #expect(plan.first?.hasPrefix("Incremental Sort") == true, "\(text)")
        #expect(text.contains("Presorted Key: t.original_transaction_id, t.purchase_date"), "\(text)")
        #expect(!text.contains("external merge"), "\(text)")
        // The app's currency: one probe per subscription, not per ledger row.
        let probes = plan.filter { $0.contains("subscriptions_original_transaction_id_key") }
        #expect(probes.count == 1, "\(text)")
        #expect(probes.first?.contains("loops=\(Self.subscriptions))") == true, "\(text)")

        // And what it reads: every row, each subscription's together, oldest first.
        let rows = try world.connection.query(sql, [runId, since, StoreWorld.asOf, Int64(0)])
        let read = try rows.map {
            (
                otid: try $0.decode("original_transaction_id", as: String.self),
                date: try $0.decode("purchase_date", as: Date.self),
                currency: try $0.decode("subscription_currency", as: String?.self)
            )
        }
        #expect(read.count == Self.subscriptions * Self.perSubscription)
        var seen: Set<String> = []
        for (previous, row) in zip(read, read.dropFirst()) where row.otid != previous.otid {
            #expect(seen.insert(previous.otid).inserted, "\(previous.otid)'s rows are not together")
        }
        for (previous, row) in zip(read, read.dropFirst()) where row.otid == previous.otid {
            #expect(previous.date < row.date)
        }
        #expect(read.allSatisfy { $0.currency == "EUR" })
    }

    /// The statement with its parameters written in (EXPLAIN takes no parameters without PREPARE).
    static func literal(_ sql: String, runId: Int64, since: Date) -> String {
        func timestamp(_ date: Date) -> String { "'\(ISO8601DateFormatter().string(from: date))'::timestamptz" }
        return sql.replacingOccurrences(of: "$1", with: "\(runId)::bigint")
            .replacingOccurrences(of: "$2", with: timestamp(since))
            .replacingOccurrences(of: "$3", with: timestamp(StoreWorld.asOf))
            .replacingOccurrences(of: "$4", with: "0::bigint")
    }
}
