import Foundation
import Postgres
import ReceiptDomain
import Testing

@testable import Reconciler

/// The rejected schedule (sql/005_rejected_recheck.sql): a row whose last verification was a rejection is
/// left out of the nightly scan until its next_check_at (1, 2, 4, ... days beyond --min-recheck, widening
/// with each rejection in a row), at once when the app changed it, always by a backfill; a decision clears it.
@Suite struct RejectedRecheckTests {
    /// Writes Apple's rejection of `id` as a run as of `night` would (verifiedAt = night, default schedule).
    static func reject(_ world: StoreWorld, _ id: Int64, at night: Date, invalidReceipt: Bool = false) throws {
        let runId = try world.createRun(items: [id])
        let store = try world.store(runId: runId, verifiedAt: night)
        let items = try store.fetchPending(after: 0, limit: 10)
        let result = ItemResult(
            item: try #require(items.first),
            kind: .rejected(
                VerdictReason(.receiptNotAuthenticated, appleStatus: 21003),
                invalidReceipt: invalidReceipt
            ),
            environment: .production,
            appleStatus: 21003,
            attempts: 1
        )
        let written = try store.write([result])
        #expect(written.conflicts.isEmpty)
    }

    static func nextCheck(_ world: StoreWorld, _ id: Int64) throws -> (count: Int?, next: Date?) {
        let row = try world.subscription(id)
        return (try row.decode("rejected_count", as: Int?.self), try row.decode("next_check_at", as: Date?.self))
    }

    @Test func aRejectedRowRestsOnAWideningScheduleAndTheRunCountsIt() throws {
        let world = try StoreWorld()
        // Expired ten days ago: inside the 60-day lookback on every night of this test.
        let rejected = try world.insertSubscription(
            "x1",
            expiresAt: StoreWorld.day(-10),
            state: "expired",
            lastVerifiedAt: StoreWorld.day(-2),
            version: 2,
            verifiedVersion: 2
        )
        let ordinary = try world.insertSubscription(
            "x2",
            expiresAt: StoreWorld.day(-10),
            state: "expired",
            lastVerifiedAt: StoreWorld.day(-2),
            version: 2,
            verifiedVersion: 2
        )
        #expect(try world.dueSelection() == [rejected, ordinary])

        // Rejected on night 0: rests 1 day beyond --min-recheck (20 h): night 1 leaves it out, night 2 asks.
        try Self.reject(world, rejected, at: StoreWorld.day(0))
        var state = try Self.nextCheck(world, rejected)
        #expect(state.count == 1)
        #expect(state.next == StoreWorld.day(1).addingTimeInterval(20 * 3600))
        #expect(try world.dueSelection(asOf: StoreWorld.day(1)) == [ordinary])
        // The run counted what it left out, with the next check.
        let night1 = try #require(
            try world.connection.queryFirst(
                """
                SELECT not_due_rejected_count, not_due_rejected_next FROM reconciliation_runs
                 ORDER BY id DESC LIMIT 1
                """
            )
        )
        #expect(try night1.decode("not_due_rejected_count", as: Int?.self) == 1)
        #expect(try night1.decode("not_due_rejected_next", as: Date?.self) == state.next)
        #expect(try world.dueSelection(asOf: StoreWorld.day(2)) == [rejected, ordinary])

        // Second rejection in a row (night 2): 2 days: nights 3 and 4 leave it out, night 5 asks.
        try Self.reject(world, rejected, at: StoreWorld.day(2))
        state = try Self.nextCheck(world, rejected)
        #expect(state.count == 2)
        #expect(try !world.dueSelection(asOf: StoreWorld.day(3)).contains(rejected))
        #expect(try !world.dueSelection(asOf: StoreWorld.day(4)).contains(rejected))
        #expect(try world.dueSelection(asOf: StoreWorld.day(5)).contains(rejected))

        // Third (an invalid_receipt counts too): 4 days: nights 6..9 leave it out, night 10 asks.
        try Self.reject(world, rejected, at: StoreWorld.day(5), invalidReceipt: true)
        state = try Self.nextCheck(world, rejected)
        #expect(state.count == 3)
        #expect(try world.subscription(rejected).decode("last_verify_status", as: String.self) == "invalid_receipt")
        #expect(try !world.dueSelection(asOf: StoreWorld.day(9)).contains(rejected))
        #expect(try world.dueSelection(asOf: StoreWorld.day(10)).contains(rejected))

        // A night with nothing left out counts zero, with no date.
        let quiet = try #require(
            try world.connection.queryFirst(
                "SELECT not_due_rejected_count, not_due_rejected_next FROM reconciliation_runs ORDER BY id DESC LIMIT 1"
            )
        )
        #expect(try quiet.decode("not_due_rejected_count", as: Int?.self) == 0)
        #expect(try quiet.decode("not_due_rejected_next", as: Date?.self) == nil)
    }

    @Test func theScheduleWidensToItsLastStepAndRepeatsIt() {
        let schedule = RejectedRecheckSchedule()
        let start = StoreWorld.day(0)
        // Hours to the next check after the 1st..8th rejection in a row: the step, plus --min-recheck (20 h).
        let hours = (1...8).map {
            Int(schedule.nextCheck(after: start, rejections: $0).timeIntervalSince(start) / 3600)
        }
        #expect(hours == [1, 2, 4, 8, 16, 30, 30, 30].map { $0 * 24 + 20 })
        let custom = RejectedRecheckSchedule(stepsSeconds: [3600, 7200], minRecheckSeconds: 0)
        #expect(custom.nextCheck(after: start, rejections: 5) == start.addingTimeInterval(7200))
    }

    @Test func anAppChangeMakesARejectedRowDueAtOnceAndBackfillAlwaysAsks() throws {
        let world = try StoreWorld()
        let rejected = try world.insertSubscription(
            "y1",
            expiresAt: StoreWorld.day(-10),
            state: "expired",
            lastVerifiedAt: StoreWorld.day(-2),
            version: 2,
            verifiedVersion: 2
        )
        let revoked = try world.insertSubscription(
            "y2",
            expiresAt: StoreWorld.day(-200),
            state: "revoked",
            lastVerifiedAt: StoreWorld.day(-8),
            version: 2,
            verifiedVersion: 2
        )
        try Self.reject(world, rejected, at: StoreWorld.day(0))
        try Self.reject(world, revoked, at: StoreWorld.day(0))
        // Night 1: neither (the revoked row's rejection rests it beyond --recheck-revoked's 7 days too).
        #expect(try world.dueSelection(asOf: StoreWorld.day(1)).isEmpty)
        #expect(try world.dueSelection(asOf: StoreWorld.day(8)) == [rejected, revoked])

        // Backfill by id, or all rows: always asks.
        let backfill = try world.createRun(asOf: StoreWorld.day(1))
        try RunScanner(connection: world.connection, runId: backfill, asOf: StoreWorld.day(1))
            .scan(.backfill(BackfillFilter(originalTransactionIds: ["y1"])))
        #expect(try world.selected(runId: backfill) == [rejected])
        let all = try world.createRun(asOf: StoreWorld.day(1))
        try RunScanner(connection: world.connection, runId: all, asOf: StoreWorld.day(1)).scan(
            .backfill(BackfillFilter())
        )
        #expect(try world.selected(runId: all) == [rejected, revoked])

        // The app stores a new receipt: due the very next night.
        try world.connection.execute(
            "UPDATE subscriptions SET latest_receipt = 'TkVXUkVDRUlQVA==' WHERE id = ANY($1::bigint[])",
            [[Optional(rejected), Optional(revoked)]]
        )
        #expect(try world.dueSelection(asOf: StoreWorld.day(1)) == [rejected, revoked])

        // A decision clears the schedule.
        let runId = try world.createRun(items: [rejected])
        let store = try world.store(runId: runId)
        let items = try store.fetchPending(after: 0, limit: 10)
        _ = try store.write(
            items.map {
                TestDecisions.decided(
                    $0,
                    TestDecisions.decision($0, state: .expired, expiresAt: StoreWorld.day(-10), outcome: .unchanged)
                )
            }
        )
        let cleared = try Self.nextCheck(world, rejected)
        #expect(cleared.count == nil && cleared.next == nil)
    }

    /// The run's count of rows left out reads subscription_checks_next_check_idx, not the whole table.
    @Test func theNotDueCountReadsTheNextCheckIndexWith20000Rows() async throws {
        let world = try await EndToEndFixture(subscriptions: 0)
        let conn = try world.connect()
        defer { conn.close() }
        // 20,000 verified rows; every 50th rejected with a next check in the coming days.
        try conn.execute(
            """
            INSERT INTO subscriptions (user_id, product_id, original_transaction_id, latest_receipt, expires_at, state,
                                       version)
            SELECT 'user-' || g, 'com.example.renewals.pro.monthly', (1000000000000000 + g)::text, 'QUJD',
                   timestamptz '2026-11-21T02:30:00Z' - ((g * 7919) % 90) * interval '1 day', 'active', 2
              FROM generate_series(1, 20000) AS g
            """
        )
        try conn.execute(
            """
            INSERT INTO subscription_checks (subscription_id, last_verified_at, last_verify_status, verified_version,
                                             rejected_count, next_check_at)
            SELECT id, timestamptz '2026-11-19T00:00:00Z', CASE WHEN g % 50 = 0 THEN 'rejected' ELSE 'ok' END, 2,
                   CASE WHEN g % 50 = 0 THEN 1 END,
                   CASE WHEN g % 50 = 0 THEN timestamptz '2026-11-21T02:30:00Z' + (g % 7) * interval '1 day' END
              FROM (SELECT id, original_transaction_id::bigint - 1000000000000000 AS g FROM subscriptions) AS x
            """
        )
        try conn.execute("ANALYZE subscriptions")
        try conn.execute("ANALYZE subscription_checks")
        let asOf = StoreWorld.asOf
        let plan = try conn.query(
            "EXPLAIN " + RunScanner.notDueRejectedSQL,
            [
                Int64(1), asOf, asOf.addingTimeInterval(-60 * 86_400), asOf.addingTimeInterval(86_400),
                asOf.addingTimeInterval(-20 * 3600), asOf.addingTimeInterval(-7 * 86_400),
            ]
        ).map { try $0.decode(0, as: String.self) }.joined(separator: "\n")
        #expect(plan.contains("subscription_checks_next_check_idx"), "\(plan)")
        #expect(!plan.contains("Seq Scan on subscriptions"), "\(plan)")
    }
}
