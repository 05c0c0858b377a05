import Foundation
import Postgres
import ReceiptDomain
import Testing

@testable import Reconciler

/// What a nightly write leaves out (docs/architecture.md, "Database work per subscription"): the ledger of
/// a subscription whose ledger digest is unchanged, and a receipt carrying nothing the stored one lacks (which keeps
/// its stored out-of-line copy). A backfill writes the whole ledger again.
@Suite struct WriteSavingsTests {
    static func ledgerRows(_ world: StoreWorld, _ otid: String) throws -> Int {
        try world.connection.count(
            "SELECT count(*) AS n FROM subscription_transactions WHERE original_transaction_id = $1",
            [otid]
        )
    }

    /// Runs one item of `id` through a store and writes `decide(item)`.
    static func night(
        _ world: StoreWorld,
        _ id: Int64,
        backfill: Bool = false,
        _ decide: (WorkItem) -> Decision
    ) throws {
        let runId = try world.createRun(items: [id])
        let store = try world.store(runId: runId)
        store.writesUnchangedLedgers = backfill
        let item = try #require(try store.fetchPending(after: 0, limit: 10).first)
        let written = try store.write([TestDecisions.decided(item, decide(item))])
        #expect(written.conflicts.isEmpty && written.refused.isEmpty && written.batchFailure == nil)
    }

    @Test func anUnchangedLedgerIsNotSentAgainAChangedOneIsAndABackfillSendsItAll() throws {
        let world = try StoreWorld()
        let id = try world.insertSubscription("2001", expiresAt: StoreWorld.day(20), state: "active")
        try Self.night(world, id) { TestDecisions.decision($0, expiresAt: StoreWorld.day(20)) }
        #expect(try Self.ledgerRows(world, "2001") == 1)
        let digest = try world.connection.queryFirst(
            "SELECT ledger_digest FROM subscription_checks WHERE subscription_id = $1",
            [id]
        )?
        .decode("ledger_digest", as: String?.self)
        #expect(digest?.hasPrefix(LedgerDigest.version + ":") == true)

        // The ledger row is gone (repaired away by hand); the same answer the next night does not send it.
        try world.connection.execute("DELETE FROM subscription_transactions WHERE original_transaction_id = '2001'")
        try Self.night(world, id) { TestDecisions.decision($0, expiresAt: StoreWorld.day(20)) }
        #expect(try Self.ledgerRows(world, "2001") == 0)

        // A changed ledger (the transaction refunded) is sent, with its new digest.
        try Self.night(world, id) {
            TestDecisions.decision($0, expiresAt: StoreWorld.day(20), ledgerCancellationReason: 1)
        }
        #expect(try Self.ledgerRows(world, "2001") == 1)
        let changed = try world.connection.queryFirst(
            "SELECT ledger_digest FROM subscription_checks WHERE subscription_id = $1",
            [id]
        )?
        .decode("ledger_digest", as: String?.self)
        #expect(changed != digest)

        // A backfill writes the whole ledger whatever the digest says.
        try world.connection.execute("DELETE FROM subscription_transactions WHERE original_transaction_id = '2001'")
        try Self.night(world, id, backfill: true) {
            TestDecisions.decision($0, expiresAt: StoreWorld.day(20), ledgerCancellationReason: 1)
        }
        #expect(try Self.ledgerRows(world, "2001") == 1)
    }

    @Test func anUnchangedReceiptKeepsItsStoredCopyAndANewOneIsWritten() throws {
        let world = try StoreWorld()
        // Incompressible and larger than PostgreSQL's 2 kB threshold: stored out of line (TOAST).
        var generator = SystemRandomNumberGenerator()
        func receipt() -> String {
            Data((0..<6000).map { _ in UInt8.random(in: 0...255, using: &generator) }).base64EncodedString()
        }
        let stored = receipt()
        let id = try world.insertSubscription("2002", expiresAt: StoreWorld.day(20), state: "active", receipt: stored)
        let toast = try #require(
            try world.connection.queryFirst(
                "SELECT reltoastrelid::regclass::text AS name FROM pg_class WHERE relname = 'subscriptions'"
            )?.decode("name", as: String.self)
        )
        func chunks() throws -> Set<Int64> {
            Set(
                try world.connection.query("SELECT DISTINCT chunk_id::bigint AS id FROM \(toast)")
                    .map { try $0.decode("id", as: Int64.self) }
            )
        }
        let before = try chunks()
        #expect(!before.isEmpty)

        // Apple's latest receipt is the stored one: the row keeps the same out-of-line value.
        try Self.night(world, id) {
            TestDecisions.decision($0, expiresAt: StoreWorld.day(20), latestReceipt: stored)
        }
        #expect(try chunks() == before)
        #expect(try world.subscription(id).decode("latest_receipt", as: String?.self) == stored)

        // A newly issued receipt holding the same transactions (Apple issues one on every verify) is not written.
        try Self.night(world, id) {
            TestDecisions.decision($0, expiresAt: StoreWorld.day(20), latestReceipt: receipt())
        }
        #expect(try chunks() == before)
        #expect(try world.subscription(id).decode("latest_receipt", as: String?.self) == stored)

        // A receipt carrying a change the stored one lacks (a refund: the ledger's digest changes) is written.
        let newer = receipt()
        try Self.night(world, id) {
            TestDecisions.decision(
                $0,
                expiresAt: StoreWorld.day(20),
                latestReceipt: newer,
                ledgerCancellationReason: 1
            )
        }
        #expect(try chunks() != before)
        #expect(try world.subscription(id).decode("latest_receipt", as: String?.self) == newer)
    }

    /// sql/008_receipt_storage.sql: a written receipt goes out of line as it is, never through pglz (which gives
    /// up on most base64 after doing the work). A receipt pglz could shrink to almost nothing shows it.
    @Test func aWrittenReceiptIsStoredOutOfLineWithoutCompression() throws {
        let world = try StoreWorld()
        let id = try world.insertSubscription("2003", expiresAt: StoreWorld.day(20), state: "active")
        let repetitive = String(repeating: "MIIT", count: 3000)
        try Self.night(world, id) {
            TestDecisions.decision($0, expiresAt: StoreWorld.day(20), latestReceipt: repetitive)
        }
        let row = try #require(
            try world.connection.queryFirst(
                """
                SELECT pg_column_compression(latest_receipt) AS compression, pg_column_size(latest_receipt) AS size,
                       latest_receipt
                  FROM subscriptions WHERE id = $1
                """,
                [id]
            )
        )
        #expect(try row.decode("compression", as: String?.self) == nil)
        #expect(try row.decode("size", as: Int.self) >= repetitive.utf8.count)
        #expect(try row.decode("latest_receipt", as: String.self) == repetitive)
        let storage = try world.connection.query(
            """
            SELECT attrelid::regclass::text || '.' || attname AS column, attstorage::text AS storage
              FROM pg_attribute
             WHERE (attrelid = 'subscriptions'::regclass
                    AND attname IN ('latest_receipt', 'signed_transaction_info', 'signed_renewal_info'))
                OR (attrelid = 'subscription_transactions'::regclass AND attname = 'signed_transaction')
            """
        ).map { "\(try $0.decode("column", as: String.self))=\(try $0.decode("storage", as: String.self))" }
        #expect(
            Set(storage) == [
                "subscriptions.latest_receipt=e", "subscriptions.signed_transaction_info=e",
                "subscriptions.signed_renewal_info=e", "subscription_transactions.signed_transaction=e",
            ]
        )
    }
}
