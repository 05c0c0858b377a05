import Foundation
import Postgres
import ReceiptDomain
import Reconciler
import Testing

/// The app's `subscriptions` row is written only when a column the app reads changes; the reconciler's bookkeeping
/// goes to `subscription_checks` (docs/architecture.md, "Database work per subscription";
/// sql/018_subscription_checks.sql). "Untouched" is read from the row itself (its `version`, `updated_at` and
/// `xmin`, the transaction that wrote its current version), not from statistics.
@Suite struct QuietNightWriteTests {
    static let night1 = StoreWorld.asOf
    static let night2 = StoreWorld.asOf.addingTimeInterval(86_400)

    /// A store verifying as of `night` for a new run over `ids`, and its pending items.
    static func store(_ world: StoreWorld, _ ids: [Int64], at night: Date) throws -> (RunStore, [WorkItem]) {
        let runId = try world.createRun(items: ids)
        let store = try world.store(runId: runId, verifiedAt: night)
        return (store, try store.fetchPending(after: 0, limit: 10))
    }

    /// Tonight's answer for `item`: Apple signs its payloads again on every call, so they differ every night.
    static func answer(_ item: WorkItem, night: Date, state: SubscriptionState = .active, expiresAt: Date) -> Decision {
        var decision = TestDecisions.decision(item, state: state, expiresAt: expiresAt)
        decision.signedTransactionInfo = "header.transaction.\(Int(night.timeIntervalSince1970))"
        decision.signedRenewalInfo = "header.renewal.\(Int(night.timeIntervalSince1970))"
        return decision
    }

    /// The app row's version, when it was last updated and by which transaction, and its signed payload.
    static func appRow(_ world: StoreWorld, _ id: Int64) throws -> (version: Int64, updatedAt: Date, xmin: String) {
        let row = try #require(
            try world.connection.queryFirst(
                "SELECT version, updated_at, xmin::text AS xmin FROM subscriptions WHERE id = $1",
                [id]
            )
        )
        return (try row.decode("version"), try row.decode("updated_at"), try row.decode("xmin"))
    }

    static func checks(_ world: StoreWorld, _ id: Int64) throws -> PostgresRow? {
        try world.connection.queryFirst(
            """
            SELECT last_verified_at, last_verify_status, verified_version, rejected_count, next_check_at
              FROM subscription_checks WHERE subscription_id = $1
            """,
            [id]
        )
    }

    @Test func theSameAnswerASecondNightLeavesTheAppRowUntouched() throws {
        let world = try StoreWorld()
        let id = try world.insertSubscription("3001", expiresAt: StoreWorld.day(10), state: "active")
        let (first, items1) = try Self.store(world, [id], at: Self.night1)
        let item1 = try #require(items1.first)
        let wrote1 = try first.write([
            TestDecisions.decided(item1, Self.answer(item1, night: Self.night1, expiresAt: StoreWorld.day(40)))
        ])
        #expect(wrote1.conflicts.isEmpty)
        let after1 = try Self.appRow(world, id)
        #expect(after1.version == 2, "the first night's answer changed the row: updated once")
        let signed1 = try world.connection.queryFirst(
            "SELECT signed_transaction_info FROM subscriptions WHERE id = $1",
            [id]
        )?.decode("signed_transaction_info", as: String?.self)
        #expect(signed1 == "header.transaction.\(Int(Self.night1.timeIntervalSince1970))")

        let (second, items2) = try Self.store(world, [id], at: Self.night2)
        let item2 = try #require(items2.first)
        let wrote2 = try second.write([
            TestDecisions.decided(item2, Self.answer(item2, night: Self.night2, expiresAt: StoreWorld.day(40)))
        ])
        #expect(wrote2.conflicts.isEmpty && wrote2.notWritten.isEmpty)
        let after2 = try Self.appRow(world, id)
        #expect(after2.version == after1.version)
        #expect(after2.updatedAt == after1.updatedAt)
        #expect(after2.xmin == after1.xmin, "no new version of the app's row")
        let signed2 = try world.connection.queryFirst(
            "SELECT signed_transaction_info FROM subscriptions WHERE id = $1",
            [id]
        )?.decode("signed_transaction_info", as: String?.self)
        #expect(signed2 == signed1, "a new signature alone does not rewrite the row")
        let checks = try #require(try Self.checks(world, id))
        #expect(try checks.decode("last_verified_at", as: Date?.self) == Self.night2)
        #expect(try checks.decode("verified_version", as: Int64?.self) == after2.version)
        #expect(try checks.decode("last_verify_status", as: String?.self) == "ok")
        #expect(
            try world.item(runId: second.runId, subscriptionId: id).decode("outcome", as: String?.self) == "renewed"
        )
    }

    @Test func aChangedStateUpdatesTheRowOnceAndVerifiesItsNewVersion() throws {
        let world = try StoreWorld()
        let id = try world.insertSubscription("3002", expiresAt: StoreWorld.day(10), state: "active")
        let (first, items1) = try Self.store(world, [id], at: Self.night1)
        let item1 = try #require(items1.first)
        _ = try first.write([
            TestDecisions.decided(item1, Self.answer(item1, night: Self.night1, expiresAt: StoreWorld.day(10)))
        ])
        let before = try Self.appRow(world, id)

        let (second, items2) = try Self.store(world, [id], at: Self.night2)
        let item2 = try #require(items2.first)
        let wrote = try second.write([
            TestDecisions.decided(
                item2,
                Self.answer(item2, night: Self.night2, state: .expired, expiresAt: StoreWorld.day(-1))
            )
        ])
        #expect(wrote.conflicts.isEmpty)
        let after = try Self.appRow(world, id)
        #expect(after.version == before.version + 1, "exactly one update")
        let row = try world.subscription(id)
        #expect(try row.decode("state", as: String?.self) == "expired")
        #expect(try row.decode("expires_at", as: Date?.self) == StoreWorld.day(-1))
        #expect(try row.decode("verified_version", as: Int64?.self) == after.version)
        #expect(try row.decode("last_verified_at", as: Date?.self) == Self.night2)
        let signed = try world.connection.queryFirst(
            "SELECT signed_transaction_info FROM subscriptions WHERE id = $1",
            [id]
        )?.decode("signed_transaction_info", as: String?.self)
        #expect(signed == "header.transaction.\(Int(Self.night2.timeIntervalSince1970))", "written with the update")
    }

    @Test func anAppWriteBetweenReadAndWriteIsAConflictEvenWhenTheAnswerChangesNothing() throws {
        let world = try StoreWorld()
        let id = try world.insertSubscription("3003", expiresAt: StoreWorld.day(10), state: "active")
        let (first, items1) = try Self.store(world, [id], at: Self.night1)
        let item1 = try #require(items1.first)
        _ = try first.write([
            TestDecisions.decided(item1, Self.answer(item1, night: Self.night1, expiresAt: StoreWorld.day(40)))
        ])

        let (second, items2) = try Self.store(world, [id], at: Self.night2)
        let item2 = try #require(items2.first)
        // The app writes the row after it was read (a column the reconciler does not decide).
        try world.connection.execute("UPDATE subscriptions SET user_id = 'user-moved' WHERE id = $1", [id])
        let byTheApp = try Self.appRow(world, id)
        let wrote = try second.write([
            TestDecisions.decided(item2, Self.answer(item2, night: Self.night2, expiresAt: StoreWorld.day(40)))
        ])
        #expect(wrote.conflicts == [id])
        let after = try Self.appRow(world, id)
        #expect(after.version == byTheApp.version && after.xmin == byTheApp.xmin)
        let checks = try #require(try Self.checks(world, id))
        #expect(try checks.decode("last_verified_at", as: Date?.self) == Self.night1, "nothing of the result")
        #expect(try checks.decode("verified_version", as: Int64?.self) == byTheApp.version - 1)
        #expect(
            try world.item(runId: second.runId, subscriptionId: id).decode("outcome", as: String?.self) == "conflict"
        )
    }

    @Test func aRejectionChangesNoAppRow() throws {
        let world = try StoreWorld()
        let id = try world.insertSubscription("3004", expiresAt: StoreWorld.day(10), state: "active")
        let other = try world.insertSubscription("3005", expiresAt: StoreWorld.day(10), state: "active")
        let before = try Self.appRow(world, id)
        let (store, items) = try Self.store(world, [id, other], at: Self.night1)
        try #require(items.count == 2)
        // The app writes the second row after it was read: its rejection is a conflict, nothing written.
        try world.connection.execute("UPDATE subscriptions SET user_id = 'user-moved' WHERE id = $1", [other])
        let otherByTheApp = try Self.appRow(world, other)
        let wrote = try store.write(
            items.map {
                TestDecisions.rejected(
                    $0,
                    VerdictReason(.receiptNotAuthenticated, appleStatus: 21003),
                    appleStatus: 21003
                )
            }
        )
        #expect(wrote.conflicts == [other])
        let after = try Self.appRow(world, id)
        #expect(after.version == before.version && after.updatedAt == before.updatedAt && after.xmin == before.xmin)
        let checks = try #require(try Self.checks(world, id))
        #expect(try checks.decode("last_verify_status", as: String?.self) == "rejected")
        #expect(try checks.decode("rejected_count", as: Int?.self) == 1)
        #expect(try checks.decode("next_check_at", as: Date?.self) != nil)
        #expect(try checks.decode("verified_version", as: Int64?.self) == before.version)
        let otherAfter = try Self.appRow(world, other)
        #expect(otherAfter.version == otherByTheApp.version && otherAfter.xmin == otherByTheApp.xmin)
        #expect(try Self.checks(world, other) == nil)
    }
}
