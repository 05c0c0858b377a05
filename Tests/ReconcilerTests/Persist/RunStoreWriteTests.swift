import Foundation
import Postgres
import ReceiptDomain
import Reconciler
import Testing

/// RunStore against a real PostgreSQL: Apple's answer is written as it is (an earlier expiry included),
/// newer data from the app is never overwritten, and one value the database cannot store refuses its own
/// item without failing the batch.
@Suite struct RunStoreWriteTests {
    /// A long base64 run standing in for a receipt: it must never appear in a reason.
    static let receiptMarker = String(repeating: "TUlJVHRnWUpLb1pJaHZjTkFRY0Nv", count: 20)

    @Test func anEarlierExpiryFromAppleIsWrittenAsItIsAndRecordedOnTheItem() throws {
        let world = try StoreWorld()
        let upgraded = try world.insertSubscription(
            "1001",
            expiresAt: StoreWorld.day(29),
            state: "active",
            productId: "com.example.renewals.pro.yearly"
        )
        let wrongDate = try world.insertSubscription("1002", expiresAt: StoreWorld.day(300), state: "active")
        let runId = try world.createRun(items: [upgraded, wrongDate])
        let store = try world.store(runId: runId)
        let items = try store.fetchPending(after: 0, limit: 10)
        try #require(items.count == 2)

        let upgradeReason = "transaction 1001-t0 was replaced by an upgrade: expiry moves back"
        let wrongReason = "Apple's answer has an earlier expiry than the stored row (nothing refunded)"
        let written = try store.write([
            TestDecisions.decided(
                items[0],
                TestDecisions.decision(
                    items[0],
                    expiresAt: StoreWorld.day(5),
                    productId: StoreWorld.product,
                    movedBackwards: upgradeReason,
                    outcome: .changed
                )
            ),
            TestDecisions.decided(
                items[1],
                TestDecisions.decision(
                    items[1],
                    state: .expired,
                    expiresAt: StoreWorld.day(-3),
                    movedBackwards: wrongReason,
                    outcome: .lapsed
                )
            ),
        ])
        #expect(written.conflicts.isEmpty && written.refused.isEmpty && written.batchFailure == nil)

        let first = try world.subscription(upgraded)
        #expect(try first.decode("expires_at", as: Date?.self) == StoreWorld.day(5))
        #expect(try first.decode("product_id", as: String.self) == StoreWorld.product)
        #expect(try first.decode("state", as: String?.self) == "active")
        // The reconciler's own write: verified_version is the version the write produced.
        #expect(try first.decode("verified_version", as: Int64?.self) == first.decode("version", as: Int64.self))
        let second = try world.subscription(wrongDate)
        #expect(try second.decode("expires_at", as: Date?.self) == StoreWorld.day(-3))
        #expect(try second.decode("state", as: String?.self) == "expired")

        let firstItem = try world.item(runId: runId, subscriptionId: upgraded)
        #expect(try firstItem.decode("expiry_moved_backwards", as: Bool.self))
        #expect(try firstItem.decode("new_expires_at", as: Date?.self) == StoreWorld.day(5))
        #expect(try firstItem.decode("product_id", as: String?.self) == StoreWorld.product)
        #expect(try firstItem.decode("reason", as: String?.self)?.contains(upgradeReason) == true)
        let secondItem = try world.item(runId: runId, subscriptionId: wrongDate)
        #expect(try secondItem.decode("expiry_moved_backwards", as: Bool.self))
        #expect(try secondItem.decode("new_expires_at", as: Date?.self) == StoreWorld.day(-3))
        #expect(try secondItem.decode("reason", as: String?.self)?.contains(wrongReason) == true)
    }

    @Test func aRowTheAppChangedAfterItWasReadIsLeftAsTheAppWroteIt() throws {
        let world = try StoreWorld()
        let id = try world.insertSubscription("2001", expiresAt: StoreWorld.day(10), state: "active")
        let runId = try world.createRun(items: [id])
        let store = try world.store(runId: runId)
        let item = try #require(try store.fetchPending(after: 0, limit: 10).first)
        // The app stores a later purchase meanwhile.
        try world.connection.execute(
            "UPDATE subscriptions SET expires_at = $2, product_id = 'com.example.renewals.pro.yearly' WHERE id = $1",
            [id, StoreWorld.day(365)]
        )
        let written = try store.write([
            TestDecisions.decided(
                item,
                TestDecisions.decision(item, expiresAt: StoreWorld.day(1), movedBackwards: "earlier")
            )
        ])
        #expect(written.conflicts == [id])
        let row = try world.subscription(id)
        #expect(try row.decode("expires_at", as: Date?.self) == StoreWorld.day(365))
        #expect(try row.decode("product_id", as: String.self) == "com.example.renewals.pro.yearly")
        #expect(try row.decode("last_verified_at", as: Date?.self) == nil)
        #expect(try row.decode("verified_version", as: Int64?.self) == nil)
        let itemRow = try world.item(runId: runId, subscriptionId: id)
        #expect(try itemRow.decode("outcome", as: String?.self) == "conflict")
        #expect(try itemRow.decode("expiry_moved_backwards", as: Bool.self) == false)
    }

    @Test func unstorableValuesRefuseOnlyTheirItemsAndEveryOtherRowIsWritten() throws {
        let world = try StoreWorld()
        var ids: [Int64] = []
        for n in 0..<7 {
            ids.append(try world.insertSubscription("300\(n)", expiresAt: StoreWorld.day(1), state: "active"))
        }
        let runId = try world.createRun(items: ids)
        let store = try world.store(runId: runId)
        let items = try store.fetchPending(after: 0, limit: 10)
        try #require(items.count == 7)
        let year300000 = Date(timeIntervalSince1970: 9_404_918_404_560 + 86_400)  // early in year 300000
        let results = [
            TestDecisions.decided(items[0], TestDecisions.decision(items[0], expiresAt: StoreWorld.day(31))),
            TestDecisions.decided(
                items[1],
                TestDecisions.decision(
                    items[1],
                    expiresAt: StoreWorld.day(31),
                    productId: "com.example\u{0}.pro",
                    latestReceipt: Self.receiptMarker
                )
            ),
            TestDecisions.decided(items[2], TestDecisions.decision(items[2], expiresAt: year300000)),
            TestDecisions.decided(
                items[3],
                TestDecisions.decision(items[3], expiresAt: StoreWorld.day(31), expirationIntent: Int(Int32.max) + 1)
            ),
            TestDecisions.decided(
                items[4],
                TestDecisions.decision(
                    items[4],
                    expiresAt: StoreWorld.day(31),
                    ledgerCancellationReason: -3_000_000_000
                )
            ),
            TestDecisions.decided(items[5], TestDecisions.decision(items[5], expiresAt: StoreWorld.day(31))),
            // Apple's status beyond 32 bits on a rejection: stored NULL, the reason keeps the number.
            TestDecisions.rejected(
                items[6],
                VerdictReason(.unknownStatus, appleStatus: 99_999_999_999),
                appleStatus: 99_999_999_999
            ),
        ]
        let written = try store.write(results)
        #expect(written.conflicts.isEmpty)
        #expect(Set(written.refused.keys) == Set([ids[1], ids[2], ids[3], ids[4]]))
        #expect(written.refused[ids[1]]?.contains("product_id contains a NUL character") == true)
        #expect(written.refused[ids[2]]?.contains("expires_at is outside PostgreSQL's timestamp range") == true)
        #expect(written.refused[ids[2]]?.contains("year 300000") == true)
        #expect(written.refused[ids[3]]?.contains("expiration_intent 2147483648 does not fit") == true)
        #expect(written.refused[ids[4]]?.contains("ledger[0].cancellation_reason") == true)

        // The good rows are written.
        for good in [ids[0], ids[5]] {
            let row = try world.subscription(good)
            #expect(try row.decode("expires_at", as: Date?.self) == StoreWorld.day(31))
            #expect(try row.decode("last_verify_status", as: String?.self) == "ok")
        }
        #expect(try world.connection.count("SELECT count(*) AS n FROM subscription_transactions") == 2)
        // The refused ones: item rejected naming the field, row untouched.
        for bad in [ids[1], ids[2], ids[3], ids[4]] {
            let item = try world.item(runId: runId, subscriptionId: bad)
            #expect(try item.decode("status", as: String.self) == "done")
            #expect(try item.decode("outcome", as: String?.self) == "rejected")
            let reason = try item.decode("reason", as: String?.self) ?? ""
            #expect(reason.hasPrefix("implausible_value: "), "\(reason)")
            #expect(!reason.contains(Self.receiptMarker.prefix(40)))
            let row = try world.subscription(bad)
            #expect(try row.decode("version", as: Int64.self) == 1)
            #expect(try row.decode("last_verified_at", as: Date?.self) == nil)
            #expect(try row.decode("expires_at", as: Date?.self) == StoreWorld.day(1))
        }
        let rejected = try world.subscription(ids[6])
        #expect(try rejected.decode("last_verify_status", as: String?.self) == "rejected")
        #expect(try rejected.decode("last_apple_status", as: Int?.self) == nil)
        let rejectedItem = try world.item(runId: runId, subscriptionId: ids[6])
        #expect(try rejectedItem.decode("apple_status", as: Int?.self) == nil)
        #expect(try rejectedItem.decode("reason", as: String?.self)?.contains("99999999999") == true)
        #expect(
            try world.connection.count("SELECT done_count AS n FROM reconciliation_runs WHERE id = $1", [runId]) == 7
        )
        #expect(
            try world.connection.count(
                "SELECT count(*) AS n FROM reconciliation_items WHERE run_id = $1 AND status = 'pending'",
                [runId]
            ) == 0
        )
    }

    @Test func aBatchTheDatabaseRefusesIsWrittenItemByItem() throws {
        let world = try StoreWorld()
        var ids: [Int64] = []
        for n in 0..<4 {
            ids.append(try world.insertSubscription("400\(n)", expiresAt: StoreWorld.day(1), state: "active"))
        }
        // A rule the app's database enforces that the reconciler knows nothing about.
        try world.connection.execute(
            "ALTER TABLE subscriptions ADD CONSTRAINT product_not_refused CHECK (product_id <> 'com.example.refused')"
        )
        let runId = try world.createRun(items: ids)
        let store = try world.store(runId: runId)
        let items = try store.fetchPending(after: 0, limit: 10)
        let results = items.enumerated().map { index, item in
            TestDecisions.decided(
                item,
                TestDecisions.decision(
                    item,
                    expiresAt: StoreWorld.day(31),
                    productId: index == 2 ? "com.example.refused" : nil,
                    latestReceipt: Self.receiptMarker
                )
            )
        }
        let written = try store.write(results)
        #expect(written.batchFailure?.contains("23514") == true, "\(written.batchFailure ?? "nil")")
        #expect(Set(written.refused.keys) == [ids[2]])
        let reason = try #require(written.refused[ids[2]])
        #expect(reason.hasPrefix("implausible_value: "))
        #expect(reason.contains("product_not_refused"), "\(reason)")
        #expect(!reason.contains(Self.receiptMarker.prefix(40)))
        #expect(!(written.batchFailure ?? "").contains(Self.receiptMarker.prefix(40)))
        for (index, id) in ids.enumerated() {
            let row = try world.subscription(id)
            let item = try world.item(runId: runId, subscriptionId: id)
            #expect(try item.decode("status", as: String.self) == "done")
            if index == 2 {
                #expect(try row.decode("version", as: Int64.self) == 1)
                #expect(try row.decode("last_verified_at", as: Date?.self) == nil)
                #expect(try item.decode("outcome", as: String?.self) == "rejected")
                #expect(try item.decode("reason", as: String?.self) == reason)
            } else {
                #expect(try row.decode("expires_at", as: Date?.self) == StoreWorld.day(31))
                #expect(try row.decode("latest_receipt", as: String.self) == Self.receiptMarker)
                #expect(try item.decode("outcome", as: String?.self) == "renewed")
            }
        }
        #expect(
            try world.connection.count("SELECT done_count AS n FROM reconciliation_runs WHERE id = $1", [runId]) == 4
        )
    }

    @Test func whenEvenAnItemsBookkeepingCannotBeWrittenTheWriteFails() throws {
        let world = try StoreWorld()
        let good = try world.insertSubscription("5001", expiresAt: StoreWorld.day(1), state: "active")
        let stuck = try world.insertSubscription("5002", expiresAt: StoreWorld.day(1), state: "active")
        let runId = try world.createRun(items: [good, stuck])
        try world.connection.execute(
            """
            ALTER TABLE reconciliation_items
              ADD CONSTRAINT never_done CHECK (status = 'pending' OR subscription_id <> \(stuck))
            """
        )
        let store = try world.store(runId: runId)
        let items = try store.fetchPending(after: 0, limit: 10)
        #expect(throws: PostgresError.self) {
            try store.write(
                items.map { TestDecisions.decided($0, TestDecisions.decision($0, expiresAt: StoreWorld.day(31))) }
            )
        }
        // The item before it was written on its own; the stuck one stays pending for --resume.
        #expect(try world.item(runId: runId, subscriptionId: good).decode("status", as: String.self) == "done")
        #expect(try world.item(runId: runId, subscriptionId: stuck).decode("status", as: String.self) == "pending")
        #expect(try world.subscription(stuck).decode("version", as: Int64.self) == 1)
    }
}
