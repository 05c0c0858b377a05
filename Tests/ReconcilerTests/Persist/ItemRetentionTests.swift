import Foundation
import Postgres
import TestSupport
import Testing

@testable import Reconciler

/// The items' retention (docs/operations.md, "Retention") on a real PostgreSQL, in `TrendSnapshotTests`' world: what
/// is deleted and kept, that the trend snapshots and their rebuild within the retention are unchanged, and the
/// `prune` command.
@Suite struct ItemRetentionTests {
    typealias World = TrendSnapshotTests.World

    static func itemsPerRun(_ db: PostgresConnection) throws -> [String] {
        try db.query(
            "SELECT run_id || ':' || count(*) AS k FROM reconciliation_items GROUP BY run_id ORDER BY run_id"
        ).map { try $0.decode("k", as: String.self) }
    }

    /// Four nights (the third with a dry run after it), an interrupted run on night 1's day and the fourth night
    /// recorded after it.
    static func fourNights(_ world: World) throws {
        try world.recordThreeNights()
        try world.run(5, "2024-05-01T04:00:00Z", status: "interrupted")
        try world.item(5, 3, "unchanged", "active")
        try world.run(6, "2024-05-04T03:00:00Z")
        try world.item(6, 1, "renewed", "active")
        try world.item(6, 2, "unchanged", "expired", autoRenew: false)
        try TrendSnapshotWriter(connection: world.connection).record(runId: 6)
    }

    @Test func oldRunsKeepEachSubscriptionsNewestDecidedItemAndTheTrendsStayExact() throws {
        let world = try World()
        defer { world.close() }
        try Self.fourNights(world)
        let night4 = try TrendCarriedStateTests.rowsOf(world.connection, "2024-05-04")
        #expect(try Self.itemsPerRun(world.connection) == ["1:6", "2:5", "3:6", "4:1", "5:1", "6:2"])

        // Seven days as of May 10, 06:00: runs 1-4 are older. Each subscription's newest decided item among them is
        // night 3's; the dry run's item goes; the interrupted run keeps everything.
        let retention = ItemRetention(days: 7)
        let pruned = try retention.prune(world.connection, now: TrendSnapshotTests.at("2024-05-10T06:00:00Z"))
        #expect(pruned.runs == 4 && pruned.items == 12 && pruned.kept == 6, "\(pruned)")
        #expect(try Self.itemsPerRun(world.connection) == ["3:6", "5:1", "6:2"])

        // Night 4's snapshot, whose previous as-of is night 3's, rebuilds from what is left exactly as recorded.
        #expect(try TrendCarriedStateTests.rebuilt(world, "2024-05-04") == night4)
        // The next night, from the carried state, equals its rebuild too.
        try world.run(7, "2024-05-05T03:00:00Z")
        try world.item(7, 4, "unchanged", "active")
        try TrendSnapshotWriter(connection: world.connection).record(runId: 7)
        #expect(
            try TrendCarriedStateTests.rowsOf(world.connection, "2024-05-05")
                == TrendCarriedStateTests.rebuilt(world, "2024-05-05")
        )

        // A second prune with the same boundary changes nothing; the listing says which runs lost items.
        let again = try retention.prune(world.connection, now: TrendSnapshotTests.at("2024-05-10T06:00:00Z"))
        #expect(again.runs == 0 && again.items == 0 && again.kept == 6, "\(again)")
        let listing = RunListing.format(try RunListing(connection: world.connection).recent(limit: 10))
        let prunedLines = listing.split(separator: "\n").filter { $0.contains("(items pruned)") }
        #expect(prunedLines.count == 4, "\(listing)")
    }

    @Test func aNightPrunesOnlyOnceTheOldestRunIsAWeekPastTheRetention() throws {
        let world = try World()
        defer { world.close() }
        try Self.fourNights(world)
        let retention = ItemRetention(days: 7)
        // Night 1 (May 1) is past 7 days on May 10 but not past 7 + 7: nothing is read or deleted.
        #expect(try retention.pruneIfDue(world.connection, now: TrendSnapshotTests.at("2024-05-10T06:00:00Z")) == nil)
        #expect(try Self.itemsPerRun(world.connection) == ["1:6", "2:5", "3:6", "4:1", "5:1", "6:2"])
        // On May 15 it is: every finished run before May 8 is pruned at once (night 4's items are the newest of
        // subscriptions 1 and 2, night 3's of the others).
        let pruned = try #require(
            try retention.pruneIfDue(world.connection, now: TrendSnapshotTests.at("2024-05-15T06:00:00Z"))
        )
        #expect(pruned.runs == 5 && pruned.items == 14 && pruned.kept == 6, "\(pruned)")
        #expect(try Self.itemsPerRun(world.connection) == ["3:4", "5:1", "6:2"])
    }

    @Test func aCompletedRunPrunesAndThePruneCommandSaysWhatItDid() async throws {
        let fixture = try await EndToEndFixture(subscriptions: 0)
        let world = try World(database: nil, connection: try fixture.connect())
        defer { world.close() }
        try Self.fourNights(world)

        let tooShort = await fixture.runReconciler(["prune", "--item-retention-days", "3"])
        #expect(tooShort.status == 64, "\(tooShort)")
        #expect(tooShort.stderr.contains("--item-retention-days"), "\(tooShort)")

        let kept = await fixture.runReconciler([
            "prune", "--now", "2024-05-10T06:00:00Z", "--item-retention-days", "30",
        ])
        #expect(kept.status == 0, "\(kept)")
        #expect(kept.stdout.contains("pruned 0 item(s)"), "\(kept)")

        let pruned = await fixture.runReconciler([
            "prune", "--now", "2024-05-10T06:00:00Z", "--item-retention-days", "7",
        ])
        #expect(pruned.status == 0, "\(pruned)")
        #expect(
            pruned.stdout.contains("pruned 12 item(s) of runs before 2024-05-03T06:00:00Z (4 run(s) pruned now)"),
            "\(pruned)"
        )
        #expect(try Self.itemsPerRun(world.connection) == ["3:6", "5:1", "6:2"])
    }

    @Test func aCompletedNightlyRunPrunesTheItemsOlderThanItsRetention() async throws {
        let fixture = try await EndToEndFixture(subscriptions: 20)
        try await fixture.startSimulator()
        let conn = try fixture.connect()
        defer { conn.close() }
        // Two old runs, 200 and 100 days before the night, each with an item for subscriptions 1-5: the newer
        // one's items are each subscription's newest among the old, the older one's go.
        for (id, days) in [(901, 200), (902, 100)] as [(Int64, Int)] {
            try conn.execute(
                """
                INSERT INTO reconciliation_runs (id, mode, dry_run, status, as_of, started_at, finished_at, exit_code)
                VALUES ($1, 'nightly', false, 'completed', $2::timestamptz - make_interval(days => $3::int),
                        $2::timestamptz - make_interval(days => $3::int), $2::timestamptz - make_interval(days => $3::int), 0)
                """,
                [id, fixture.now, days]
            )
            try conn.execute(
                """
                INSERT INTO reconciliation_items (run_id, subscription_id, original_transaction_id, status, outcome,
                    new_state, product_id, auto_renew)
                SELECT $1, id, original_transaction_id, 'done', 'unchanged', 'active', product_id, true
                  FROM subscriptions WHERE id <= 5
                """,
                [id]
            )
        }
        let night = try await fixture.run(["--rate", "2000", "--item-retention-days", "30"])
        #expect(night.status == 0, "\(night)")
        #expect(night.stderr.contains("pruned 5 item(s) of 2 run(s) older than 30 days"), "\(night.stderr)")
        #expect(try Self.itemsPerRun(conn).prefix(1) == ["1:20"])
        #expect(try Self.itemsPerRun(conn).suffix(1) == ["902:5"])

        // A report made now of a pruned run says so; the night's own report does not.
        let again = await fixture.runReconciler(["report", "902", "--report-dir", fixture.reportDirectory])
        #expect(again.status == 0, "\(again)")
        let folders = try FileManager.default.contentsOfDirectory(atPath: fixture.reportDirectory)
        for (suffix, pruned) in [("_run-902", true), ("_run-1", false)] {
            let folder = try #require(folders.first { $0.hasSuffix(suffix) }, "\(folders)")
            let path = fixture.reportDirectory + "/" + folder
            let html = try String(contentsOfFile: path + "/report.html", encoding: .utf8)
            #expect(html.contains("id=\"items-pruned-banner\"") == pruned, "\(suffix)")
            let summary =
                try JSONSerialization.jsonObject(
                    with: Data(contentsOf: URL(fileURLWithPath: path + "/summary.json"))
                ) as? [String: Any]
            #expect((summary?["items_pruned_at"] is String) == pruned, "\(suffix)")
            #expect(summary?.keys.contains("items_pruned_at") == true)
        }
    }
}
