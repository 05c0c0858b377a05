import Foundation
import Postgres
import ReceiptDomain
import Reconciler
import Testing

/// The due scan's revoked phase: a revoked subscription is verified again when the app changed its row
/// since the reconciler verified it, or when its last verification is older than --recheck-revoked, and
/// not before (a customer can buy again after a refund).
@Suite struct RevokedRecheckTests {
    /// Revoked rows in every situation, plus an ordinary row in the expiry window.
    struct Rows {
        var verifiedYesterday: Int64
        var verifiedEightDaysAgo: Int64
        var changedByTheApp: Int64
        var verifiedBeforeTheMigration: Int64
        var neverVerified: Int64
        var verifiedSixDaysAgo: Int64
        var activeInWindow: Int64
        var activeOutsideWindow: Int64
    }

    static func insertRows(_ world: StoreWorld) throws -> Rows {
        let old = StoreWorld.day(-200)
        return Rows(
            verifiedYesterday: try world.insertSubscription(
                "r1",
                expiresAt: old,
                state: "revoked",
                lastVerifiedAt: StoreWorld.day(-1),
                version: 4,
                verifiedVersion: 4
            ),
            verifiedEightDaysAgo: try world.insertSubscription(
                "r2",
                expiresAt: old,
                state: "revoked",
                lastVerifiedAt: StoreWorld.day(-8),
                version: 3,
                verifiedVersion: 3
            ),
            changedByTheApp: try world.insertSubscription(
                "r3",
                expiresAt: old,
                state: "revoked",
                lastVerifiedAt: StoreWorld.day(-1),
                version: 5,
                verifiedVersion: 4
            ),
            verifiedBeforeTheMigration: try world.insertSubscription(
                "r4",
                expiresAt: old,
                state: "revoked",
                lastVerifiedAt: StoreWorld.day(-1),
                version: 2,
                verifiedVersion: nil
            ),
            neverVerified: try world.insertSubscription("r5", expiresAt: old, state: "revoked"),
            verifiedSixDaysAgo: try world.insertSubscription(
                "r6",
                expiresAt: old,
                state: "revoked",
                lastVerifiedAt: StoreWorld.day(-6),
                version: 2,
                verifiedVersion: 2
            ),
            activeInWindow: try world.insertSubscription(
                "a1",
                expiresAt: StoreWorld.day(0.5),
                state: "active",
                lastVerifiedAt: StoreWorld.day(-2),
                version: 2,
                verifiedVersion: 2
            ),
            activeOutsideWindow: try world.insertSubscription(
                "a2",
                expiresAt: StoreWorld.day(20),
                state: "active",
                lastVerifiedAt: StoreWorld.day(-2),
                version: 2,
                verifiedVersion: 2
            )
        )
    }

    @Test func revokedRowsAreDueAfterTheIntervalOrAnAppChangeAndNotBefore() throws {
        let world = try StoreWorld()
        let r = try Self.insertRows(world)
        let expected: Set<Int64> = [
            r.verifiedEightDaysAgo, r.changedByTheApp, r.verifiedBeforeTheMigration, r.neverVerified, r.activeInWindow,
        ]
        #expect(try world.dueSelection() == expected)
        // Keyset pages of one row: the same selection.
        #expect(try world.dueSelection(pageSize: 1) == expected)
        // A shorter interval takes the row verified six days ago too.
        #expect(try world.dueSelection(recheckRevoked: 5 * 86_400) == expected.union([r.verifiedSixDaysAgo]))
        // --recheck-revoked 0: every revoked row not verified within --min-recheck (20 h) is due.
        let recentlyVerified = try world.insertSubscription(
            "r7",
            expiresAt: StoreWorld.day(-200),
            state: "revoked",
            lastVerifiedAt: StoreWorld.day(-0.1),
            version: 2,
            verifiedVersion: 2
        )
        let always = try world.dueSelection(recheckRevoked: 0)
        #expect(always.contains(r.verifiedYesterday) && always.contains(r.verifiedSixDaysAgo))
        #expect(!always.contains(recentlyVerified))
        // The row verified yesterday: not due five days later, due once seven days have passed.
        let later = try world.dueSelection(asOf: StoreWorld.day(5))
        #expect(!later.contains(r.verifiedYesterday))
        #expect(later.contains(r.verifiedSixDaysAgo))
        let week = try world.dueSelection(asOf: StoreWorld.day(6.1))
        #expect(week.contains(r.verifiedYesterday))
    }

    @Test func anAppChangeMakesARevokedRowDueAndTheReconcilersOwnWriteDoesNot() throws {
        let world = try StoreWorld()
        let r = try Self.insertRows(world)
        #expect(try !world.dueSelection().contains(r.verifiedYesterday))
        // The app stores a new receipt (the customer bought again): the trigger bumps version.
        try world.connection.execute(
            "UPDATE subscriptions SET latest_receipt = 'TkVXUkVDRUlQVA==' WHERE id = $1",
            [r.verifiedYesterday]
        )
        #expect(try world.dueSelection().contains(r.verifiedYesterday))

        // The reconciler verifies it (still revoked): its own write sets verified_version, so the row is not
        // due again until the interval has passed or the app changes it.
        let runId = try world.createRun(items: [r.verifiedYesterday, r.changedByTheApp])
        let store = try world.store(runId: runId)
        let items = try store.fetchPending(after: 0, limit: 10)
        let written = try store.write(
            items.map {
                TestDecisions.decided(
                    $0,
                    TestDecisions.decision($0, state: .revoked, expiresAt: StoreWorld.day(-200), outcome: .unchanged)
                )
            }
        )
        #expect(written.conflicts.isEmpty)
        for id in [r.verifiedYesterday, r.changedByTheApp] {
            let row = try world.subscription(id)
            #expect(try row.decode("verified_version", as: Int64?.self) == row.decode("version", as: Int64.self))
        }
        let after = try world.dueSelection()
        #expect(!after.contains(r.verifiedYesterday))
        #expect(!after.contains(r.changedByTheApp))
        // A rejection is the reconciler's own write too.
        let rejectedRun = try world.createRun(items: [r.verifiedBeforeTheMigration])
        let rejectStore = try world.store(runId: rejectedRun)
        let item = try #require(try rejectStore.fetchPending(after: 0, limit: 10).first)
        _ = try rejectStore.write([
            TestDecisions.rejected(
                item,
                VerdictReason(.receiptNotAuthenticated, appleStatus: 21003),
                appleStatus: 21003
            )
        ])
        #expect(try !world.dueSelection().contains(r.verifiedBeforeTheMigration))
    }

    @Test func aRunStoppedInTheWindowPhaseByAnOlderBuildGoesOnToTheRevokedPhase() throws {
        let world = try StoreWorld()
        let r = try Self.insertRows(world)
        // The cursor an older build left: window phase, past every row of the window.
        let runId = try world.createRun(
            scanCursor: #"{"phase": "window", "id": 999999, "expires_at": "2100-01-01T00:00:00Z"}"#
        )
        let old = #"{"due":{"lookaheadSeconds":86400,"lookbackSeconds":5184000,"minRecheckSeconds":72000}}"#
        let selection = try JSONDecoder().decode(Selection.self, from: Data(old.utf8))
        try RunScanner(connection: world.connection, runId: runId, asOf: StoreWorld.asOf).scan(selection)
        #expect(
            try world.selected(runId: runId)
                == [r.verifiedEightDaysAgo, r.changedByTheApp, r.verifiedBeforeTheMigration, r.neverVerified]
        )
        let cursor = try #require(
            try world.connection.queryFirst(
                "SELECT scan_completed, scan_cursor->>'phase' AS phase FROM reconciliation_runs WHERE id = $1",
                [runId]
            )
        )
        #expect(try cursor.decode("scan_completed", as: Bool.self))
        #expect(try cursor.decode("phase", as: String?.self) == "revoked")
    }
}
