import Foundation
import Postgres
import TestSupport
import Testing

@testable import Reconciler

/// The night's trend snapshot from the carried state (`trend_subscription_state`, docs/reports.md "Trends across
/// nights") against the same day rebuilt from the whole history, in `TrendSnapshotTests`' world: equal rows, and
/// the night reads no item it folded before.
@Suite struct TrendCarriedStateTests {
    typealias World = TrendSnapshotTests.World

    /// The rows of `date` as a rebuild from the whole history writes them, labelled as the night's for comparison.
    /// The recorded rows are put back afterwards.
    static func rebuilt(_ world: World, _ date: String) throws -> [TrendRow] {
        let recorded = try world.connection.query(
            "SELECT * FROM trend_snapshots WHERE snapshot_date = $1::date",
            [date]
        )
        #expect(!recorded.isEmpty)
        let rows = try world.connection.transaction { db -> [TrendRow] in
            try db.execute("SAVEPOINT rebuild")
            _ = try TrendSnapshotWriter.snapshot(db, date: date, source: .history)
            let rows = try rowsOf(db, date).map { row in
                var row = row
                #expect(row.recordedBy == "rebuild")
                row.recordedBy = "run"
                return row
            }
            try db.execute("ROLLBACK TO SAVEPOINT rebuild")
            return rows
        }
        return rows
    }

    static func rowsOf(_ db: PostgresConnection, _ date: String) throws -> [TrendRow] {
        try db.query(
            """
            SELECT \(TrendRow.selectList) FROM trend_snapshots WHERE snapshot_date = $1::date
             ORDER BY bundle_id, product_id, currency
            """,
            [date]
        ).map(TrendRow.init(row:))
    }

    static func count(_ db: PostgresConnection, _ sql: String) throws -> Int {
        try db.queryFirst(sql)?.decode("n", as: Int.self) ?? -1
    }

    @Test func eachNightFoldsThePreviousDaysRunsOnlyAndEqualsTheRebuild() throws {
        let world = try World()
        defer { world.close() }
        try world.recordThreeNights()
        // Night 3 advanced the carried state to night 2's as-of: runs 1 and 2 are folded, night 3 read its own.
        let folded = try world.connection.query("SELECT run_id FROM trend_folded_runs ORDER BY run_id")
            .map { try $0.decode("run_id", as: Int64.self) }
        #expect(folded == [1, 2])
        let carried = try world.connection.query(
            """
            SELECT subscription_id || ':' || run_id || ':' || state AS k FROM trend_subscription_state
             ORDER BY subscription_id
            """
        ).map { try $0.decode("k", as: String.self) }
        // Subscription 3 was not checked on night 2: its night-1 state is carried.
        #expect(
            carried == ["1:2:active", "2:2:active", "3:1:active", "4:2:billing_retry", "5:2:active", "6:2:revoked"]
        )
        for date in ["2024-05-01", "2024-05-02", "2024-05-03"] {
            #expect(try Self.rowsOf(world.connection, date) == Self.rebuilt(world, date), "\(date)")
        }
    }

    @Test func theNightDoesNotReadItemsItFoldedBefore() throws {
        // Two worlds through the same three nights, night 3 checking subscription 1 only; in the second, night 1's
        // items are gone once night 2 folded them.
        func nights(deletingNightOne: Bool) throws -> (World, [TrendRow]) {
            let world = try World()
            let writer = TrendSnapshotWriter(connection: world.connection)
            try world.night1()
            try writer.record(runId: 1)
            try world.night2()
            try writer.record(runId: 2)
            try world.run(3, TrendSnapshotTests.night3)
            try world.item(3, 1, "unchanged", "active")
            if deletingNightOne {
                try world.connection.execute("DELETE FROM reconciliation_items WHERE run_id = 1")
            }
            try writer.record(runId: 3)
            return (world, try Self.rowsOf(world.connection, "2024-05-03"))
        }
        let (whole, expected) = try nights(deletingNightOne: false)
        defer { whole.close() }
        let (pruned, recorded) = try nights(deletingNightOne: true)
        defer { pruned.close() }
        #expect(recorded == expected)
        // Subscription 3 was decided on night 1 only: still active in the night's rows, gone from the history.
        let monthly = try #require(recorded.first { $0.productId == "pro.monthly" && $0.currency == "USD" })
        #expect(monthly.active == 2 && monthly.inTrial == 1, "\(monthly)")
        #expect(try Self.rebuilt(pruned, "2024-05-03") != expected)
    }

    @Test func aResumedRunIsFoldedAgainAndADayRecordedOutOfOrderRefoldsFromTheItems() throws {
        let world = try World()
        defer { world.close() }
        let writer = TrendSnapshotWriter(connection: world.connection)
        try world.connection.execute(
            """
            INSERT INTO subscriptions (id, user_id, bundle_id, product_id, original_transaction_id, latest_receipt, state)
            VALUES (7, 'user-7', 'com.app', 'pro.monthly', 'otid-7', 'receipt', 'active')
            """
        )
        try world.transaction(
            "t7a",
            subscription: 7,
            kind: "initial",
            purchased: "2024-05-02T10:00:00Z",
            days: 30,
            price: 9990,
            currency: "USD"
        )
        try world.night1()
        try writer.record(runId: 1)
        try world.night2()
        try writer.record(runId: 2)
        // An interrupted run late on night 2's day, with one item decided so far.
        try world.run(5, "2024-05-02T20:00:00Z", status: "interrupted")
        try world.item(5, 1, "unchanged", "active")
        try world.night3()
        try writer.record(runId: 3)
        try world.run(6, "2024-05-04T03:00:00Z")
        try world.item(6, 2, "unchanged", "expired", autoRenew: false)
        try writer.record(runId: 6)
        // Night 4 folded run 5 while it was interrupted.
        #expect(
            try Self.count(world.connection, "SELECT count(*) AS n FROM trend_folded_runs WHERE status = 'interrupted'")
                == 1
        )

        // Resumed and completed: subscription 7's item is new in a run already folded.
        try world.item(5, 7, "renewed", "active")
        try world.connection.execute("UPDATE reconciliation_runs SET status = 'completed' WHERE id = 5")
        try world.run(7, "2024-05-05T03:00:00Z")
        try writer.record(runId: 7)
        let night5 = try Self.rowsOf(world.connection, "2024-05-05")
        #expect(night5 == (try Self.rebuilt(world, "2024-05-05")))
        let monthly = try #require(night5.first { $0.productId == "pro.monthly" && $0.currency == "USD" })
        #expect(monthly.active == 4, "subscriptions 1, 3, 6 and 7")

        // Night 2 recorded again (its day run is now run 5): the carried state is ahead of the day, so it is folded
        // again from the items, up to night 1.
        try writer.record(runId: 5)
        #expect(try Self.rowsOf(world.connection, "2024-05-02") == Self.rebuilt(world, "2024-05-02"))
        #expect(try Self.count(world.connection, "SELECT count(*) AS n FROM trend_folded_runs") == 1)
        // And night 5 again, from there: the same rows as before.
        try writer.record(runId: 7)
        #expect(try Self.rowsOf(world.connection, "2024-05-05") == night5)
    }
}

extension TrendCarriedStateTests {
    @Test func theNightsPlansReadItemsByRunNeverTheWholeTable() throws {
        let world = try World()
        defer { world.close() }
        try world.night1()
        try world.connection.transaction { db in
            try db.execute(TrendSnapshotWriter.planSettings)
            let explain = { (statement: String, arguments: String) throws -> String in
                try db.execute("PREPARE planned AS \(statement)")
                defer { _ = try? db.execute("DEALLOCATE planned") }
                return try db.query("EXPLAIN EXECUTE planned(\(arguments))")
                    .map { try $0.decode("QUERY PLAN", as: String.self) }.joined(separator: "\n")
            }
            let snapshot = try explain(
                TrendSnapshotSQL.insert(.carried),
                "'2024-05-01', '2024-05-01T03:00:00Z', '2024-05-01T00:00:00Z', 1, '{\"JPY\":0}', 'run'"
            )
            let fold = try explain(TrendCarriedState.fold, "'2024-05-01T03:00:00Z'")
            for plan in [snapshot, fold] {
                #expect(!plan.contains("Seq Scan on reconciliation_items"), "\(plan)")
                #expect(plan.contains("using reconciliation_items_pkey on reconciliation_items"), "\(plan)")
            }
            #expect(snapshot.contains("Seq Scan on trend_subscription_state"), "\(snapshot)")
        }
    }
}
