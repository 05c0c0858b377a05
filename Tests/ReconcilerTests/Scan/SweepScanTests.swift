import Foundation
import Postgres
import Reconciler
import Testing

/// The nightly sweep (docs/architecture.md, "The sweep"; sql/006_sweep.sql): beyond the due window, a run
/// takes ceil(eligible / --sweep-days) of the verified, non-revoked rows, least recently verified first,
/// never one verified within --min-recheck, a revoked one, or a rejected one resting on its schedule, and
/// counts only rows the window did not already select.
@Suite struct SweepScanTests {
    @Test func theSweepTakesItsQuotaLeastRecentlyVerifiedFirstAndCoversEveryRowInThatManyNights() throws {
        let world = try StoreWorld()
        // Ten yearly rows verified on different days, expiring months away: outside every due window.
        var yearly: [Int64] = []
        for n in 0..<10 {
            yearly.append(
                try world.insertSubscription(
                    "y\(n)",
                    expiresAt: StoreWorld.day(200),
                    state: "active",
                    lastVerifiedAt: StoreWorld.day(-Double(30 - n)),
                    version: 2,
                    verifiedVersion: 2
                )
            )
        }
        // Due by the window (expires within a day): selected as `window`, not counted by the sweep.
        let inWindow = try world.insertSubscription(
            "w",
            expiresAt: StoreWorld.day(0.5),
            state: "active",
            lastVerifiedAt: StoreWorld.day(-40),
            version: 2,
            verifiedVersion: 2
        )
        // Never swept: verified an hour ago (--min-recheck), revoked, never verified (phase 1 takes it).
        let recent = try world.insertSubscription(
            "r",
            expiresAt: StoreWorld.day(200),
            state: "active",
            lastVerifiedAt: StoreWorld.day(-1.0 / 24),
            version: 2,
            verifiedVersion: 2
        )
        let revoked = try world.insertSubscription(
            "v",
            expiresAt: StoreWorld.day(200),
            state: "revoked",
            lastVerifiedAt: StoreWorld.day(-1),
            version: 2,
            verifiedVersion: 2
        )
        let unverified = try world.insertSubscription("u", expiresAt: StoreWorld.day(200))

        // 12 eligible (10 yearly, the window row, the recent row), --sweep-days 4: quota 3, taken from the
        // oldest yearly rows (the window row is already selected; page size 2 makes the quota span pages).
        let selected = try world.dueSelection(sweepDays: 4, pageSize: 2)
        #expect(selected == Set([inWindow, unverified] + yearly.prefix(3)))
        #expect(!selected.contains(recent) && !selected.contains(revoked))
        let run = try #require(
            try world.connection.queryFirst(
                """
                SELECT sweep_eligible_count, sweep_quota, due_count, scan_cursor::text AS cursor
                  FROM reconciliation_runs ORDER BY id DESC LIMIT 1
                """
            )
        )
        #expect(try run.decode("sweep_eligible_count", as: Int?.self) == 12)
        #expect(try run.decode("sweep_quota", as: Int?.self) == 3)
        #expect(try run.decode("due_count", as: Int.self) == 5)
        let reasons = try world.connection.query(
            "SELECT due_reason, count(*) AS n FROM reconciliation_items WHERE run_id = (SELECT max(id) FROM reconciliation_runs) GROUP BY 1"
        ).reduce(into: [String: Int]()) { $0[try $1.decode("due_reason")] = try $1.decode("n") }
        #expect(reasons == ["unverified": 1, "window": 1, "sweep": 3])

        // Without a sweep: the same world selects no sweep row and plans none.
        let plain = try world.dueSelection(sweepDays: 0)
        #expect(plain == [inWindow, unverified])
        let noSweep = try world.connection.queryFirst(
            "SELECT sweep_quota FROM reconciliation_runs ORDER BY id DESC LIMIT 1"
        )
        #expect(try noSweep?.decode("sweep_quota", as: Int?.self) == nil)

        // Nights: each night verifies what it selected; within 4 nights every yearly row has been swept.
        var swept = Set<Int64>()
        for night in 0..<4 {
            let asOf = StoreWorld.day(Double(night))
            let runId = try world.createRun(asOf: asOf)
            try RunScanner(connection: world.connection, runId: runId, asOf: asOf, pageSize: 2).scan(
                .due(
                    lookaheadSeconds: 86_400,
                    lookbackSeconds: 60 * 86_400,
                    minRecheckSeconds: 20 * 3600,
                    sweepDays: 4
                )
            )
            let sweptTonight = Set(
                try world.connection.query(
                    "SELECT subscription_id FROM reconciliation_items WHERE run_id = $1 AND due_reason = 'sweep'",
                    [runId]
                ).map { try $0.decode("subscription_id", as: Int64.self) }
            )
            #expect(sweptTonight.count <= 4, "night \(night): \(sweptTonight.count)")
            swept.formUnion(sweptTonight)
            // What the run verified is verified as of its night.
            try world.connection.execute(
                """
                INSERT INTO subscription_checks (subscription_id, last_verified_at, verified_version)
                SELECT id, $2, version FROM subscriptions
                 WHERE id IN (SELECT subscription_id FROM reconciliation_items WHERE run_id = $1)
                ON CONFLICT (subscription_id) DO UPDATE
                   SET last_verified_at = EXCLUDED.last_verified_at, verified_version = EXCLUDED.verified_version
                """,
                [runId, asOf]
            )
        }
        #expect(Set(yearly).isSubset(of: swept), "\(Set(yearly).subtracting(swept))")
    }

    @Test func aSweepKilledMidScanResumesWithItsQuota() throws {
        let world = try StoreWorld()
        for n in 0..<9 {
            try world.insertSubscription(
                "y\(n)",
                expiresAt: StoreWorld.day(200),
                state: "active",
                lastVerifiedAt: StoreWorld.day(-Double(30 - n)),
                version: 2,
                verifiedVersion: 2
            )
        }
        // A run stopped inside its sweep: quota 3, one row taken, two left, cursor after the oldest row.
        let oldest = try #require(
            try world.connection.queryFirst(
                "SELECT id, last_verified_at FROM subscriptions LEFT JOIN subscription_checks ON subscription_id = id ORDER BY last_verified_at LIMIT 1"
            )
        )
        let oldestId: Int64 = try oldest.decode("id")
        let runId = try world.createRun()
        try world.connection.execute(
            """
            INSERT INTO reconciliation_items (run_id, subscription_id, original_transaction_id, due_reason)
            SELECT $1, id, original_transaction_id, 'sweep' FROM subscriptions WHERE id = $2
            """,
            [runId, oldestId]
        )
        try world.connection.execute(
            """
            UPDATE reconciliation_runs
               SET due_count = 1, sweep_eligible_count = 9, sweep_quota = 3,
                   scan_cursor = jsonb_build_object('phase', 'sweep', 'id', $2::bigint,
                                                    'verified_at', $3::timestamptz, 'remaining', 2)
             WHERE id = $1
            """,
            [runId, oldestId, try oldest.decode("last_verified_at", as: Date.self)]
        )
        let total = try RunScanner(connection: world.connection, runId: runId, asOf: StoreWorld.asOf).scan(
            .due(lookaheadSeconds: 86_400, lookbackSeconds: 60 * 86_400, minRecheckSeconds: 20 * 3600, sweepDays: 3)
        )
        #expect(total == 3)
        let taken = try world.connection.query(
            """
            SELECT s.original_transaction_id FROM reconciliation_items i JOIN subscriptions s ON s.id = i.subscription_id
              JOIN subscription_checks c ON c.subscription_id = s.id
             WHERE i.run_id = $1 ORDER BY c.last_verified_at
            """,
            [runId]
        ).map { try $0.decode("original_transaction_id", as: String.self) }
        #expect(taken == ["y0", "y1", "y2"])
        let run = try #require(
            try world.connection.queryFirst("SELECT sweep_quota FROM reconciliation_runs WHERE id = $1", [runId])
        )
        #expect(try run.decode("sweep_quota", as: Int?.self) == 3)
    }

    @Test func theSweepReadsItsIndexNotTheTable() async throws {
        let world = try await EndToEndFixture(subscriptions: 0)
        let conn = try world.connect()
        defer { conn.close() }
        // 20,000 verified rows over 90 days, one in 20 revoked.
        try conn.execute(
            """
            INSERT INTO subscriptions (user_id, product_id, original_transaction_id, latest_receipt, expires_at, state,
                                       version)
            SELECT 'user-' || g, 'com.example.renewals.pro.yearly', (1000000000000000 + g)::text, 'QUJD',
                   timestamptz '2027-06-01T00:00:00Z', CASE WHEN g % 20 = 0 THEN 'revoked' ELSE 'active' END, 2
              FROM generate_series(1, 20000) AS g
            """
        )
        try conn.execute(
            """
            INSERT INTO subscription_checks (subscription_id, last_verified_at, last_verify_status, verified_version)
            SELECT id, timestamptz '2026-11-20T00:00:00Z' - ((g * 7919) % 90) * interval '1 day', 'ok', 2
              FROM (SELECT id, original_transaction_id::bigint - 1000000000000000 AS g FROM subscriptions) AS x
            """
        )
        try conn.execute("INSERT INTO reconciliation_runs (mode, status, as_of) VALUES ('nightly', 'running', now())")
        try conn.execute("ANALYZE subscriptions")
        try conn.execute("ANALYZE subscription_checks")
        try conn.execute("ANALYZE reconciliation_items")
        let asOf = StoreWorld.asOf
        let page = try conn.query(
            "EXPLAIN " + RunScanner.sweepPageSQL,
            [Int64(1), asOf.addingTimeInterval(-20 * 3600), Date.distantPast, Int64(0), Int64(5000), asOf]
        ).map { try $0.decode(0, as: String.self) }.joined(separator: "\n")
        #expect(page.contains("Index Scan using subscription_checks_sweep_idx"), "\(page)")
        #expect(page.contains("Index Scan using subscriptions_pkey"), "\(page)")
        #expect(!page.contains("Seq Scan on subscription_checks"), "\(page)")
        #expect(!page.contains("Seq Scan on subscriptions"), "\(page)")
        #expect(!page.contains("Sort"), "\(page)")

        // The run's items, newer than the statistics (as in a real run: the window's pages were just inserted):
        // "not selected by the run" stays one probe of the items' primary key per row, never a pass over all of
        // the run's items per row (which grows with rows x items).
        try conn.execute(
            """
            INSERT INTO reconciliation_items (run_id, subscription_id, original_transaction_id)
            SELECT 1, id, original_transaction_id FROM subscriptions WHERE id % 4 = 0
            """
        )
        let analysed = try conn.query(
            "EXPLAIN (ANALYZE, COSTS OFF) " + RunScanner.sweepPageSQL,
            [Int64(1), asOf.addingTimeInterval(-20 * 3600), Date.distantPast, Int64(0), Int64(5000), asOf]
        ).map { try $0.decode(0, as: String.self) }.joined(separator: "\n")
        func probesBothKeys(_ plan: String) -> Bool {
            plan.split(separator: "\n").contains {
                $0.contains("Index Cond: ((run_id = ") && $0.contains(" AND (subscription_id = s.id))")
            }
        }
        #expect(probesBothKeys(analysed), "\(analysed)")
        #expect(!analysed.contains("Join Filter"), "\(analysed)")
        let notDue = try conn.query(
            "EXPLAIN (COSTS OFF) " + RunScanner.notDueRejectedSQL,
            [Int64(1), asOf, asOf.addingTimeInterval(-60 * 86_400), asOf.addingTimeInterval(86_400), asOf, asOf]
        ).map { try $0.decode(0, as: String.self) }.joined(separator: "\n")
        #expect(probesBothKeys(notDue), "\(notDue)")
        #expect(!notDue.contains("Join Filter"), "\(notDue)")
    }
}
