import CivilTime
import Foundation
import Postgres
import Reconciler
import ReconcilerDemo
import TestSupport
import Testing

/// Runs through the App Store Server API against the simulator, end to end with the real binaries
/// (docs/testing.md): the truth's Server API view, signature faults refused with rows untouched, the
/// requests of a quiet second night, and a wrong key id stopping the run at the first 401.
@Suite struct ServerAPIRunTests {
    static let fast = [
        "--rate", "2000", "--concurrency", "32", "--statuses-rate", "2000", "--history-rate", "2000",
        "--notifications-rate", "2000",
    ]
    static let simulatorLimits = [
        "--max-rps-statuses", "2000", "--max-rps-history", "2000", "--max-rps-notification-history", "2000",
    ]

    @Test func runWithFaultsAndForgedSignaturesMatchesTheTruth() async throws {
        let fixture = try await EndToEndFixture(subscriptions: 800, seedPriorRuns: true)
        _ = try await fixture.startSimulator(
            Self.simulatorLimits + [
                // Every fault kind at 2% of the answers (a 429 pauses the whole endpoint for its Retry-After, as
                // Apple asks), and 5% of the subscriptions forged for good. A hang outlasts the run's request timeout
                // by far; an answer that is only slow (a busy machine) does not reach it.
                "--faults-all", "0.02", "--hang-ms", "15000", "--retry-after", "1",
                "--signature-faulty-subscriptions", "0.05",
            ]
        )
        let env = try fixture.serverAPIEnvironment()
        // The first night reads all the notification history Apple keeps: one-time purchases reach the ledger only
        // through their notifications.
        let flaky =
            Self.fast + [
                "--max-unresolved", "1", "--request-timeout", "5", "--max-attempts", "4", "--notifications-lookback",
                "180d",
            ]
        let first = try await fixture.run(flaky, extraEnvironment: env)
        #expect([0, 2].contains(first.status), "\(first)")
        // Transient faults leave rows unresolved (never verified); the next nights finish them.
        let conn = try fixture.connect()
        defer { conn.close() }
        func neverVerified() throws -> Int {
            try conn.queryFirst(
                "SELECT count(*) AS n FROM subscriptions LEFT JOIN subscription_checks ON subscription_id = id WHERE last_verified_at IS NULL"
            )?
            .decode("n", as: Int.self) ?? 0
        }
        // Rows a notification made due whose item ended unresolved are due again the next night.
        func unresolvedLastNight() throws -> Int {
            try conn.count(
                """
                SELECT count(*) AS n FROM reconciliation_items
                 WHERE run_id = (SELECT max(id) FROM reconciliation_runs) AND outcome = 'unresolved'
                """
            )
        }
        var nights = 1
        while try neverVerified() > 0 || unresolvedLastNight() > 0, nights < 4 {
            let again = try await fixture.run(flaky, extraEnvironment: env)
            #expect([0, 2].contains(again.status), "\(again)")
            nights += 1
        }
        #expect(try neverVerified() == 0, "rows still unresolved after \(nights) nights")

        // Every row whose answers were forged: refused, named, and untouched.
        let refused = try conn.query(
            """
            SELECT original_transaction_id, state, expires_at, last_error FROM subscriptions LEFT JOIN subscription_checks ON subscription_id = id
             WHERE last_error LIKE 'signed_data_refused%'
            """
        )
        #expect(refused.count > 10, "the simulator forges about 5% of the subscriptions")
        let truth = try fixture.truthRecords()
        let stored = Dictionary(
            truth.compactMap { r -> (String, String)? in
                // What the row held before the runs: a previous night's expiry where one was seeded, else the app's.
                let prior = (r["prior_run"] as? [String: Any])?["expires_at"] as? String
                guard let id = r["original_transaction_id"] as? String,
                    let e = prior ?? r["stored_expires_at"] as? String
                else { return nil }
                return (id, e)
            },
            uniquingKeysWith: { a, _ in a }
        )
        var refusedIds = Set<String>()
        for row in refused {
            let id: String = try row.decode("original_transaction_id")
            refusedIds.insert(id)
            let expires: Date? = try row.decode("expires_at")
            #expect(
                expires.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) }
                    == stored[id].flatMap(RFC3339.parse).map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) },
                "row \(id): a refused signature must leave the stored expiry"
            )
        }
        // Everything else equals the truth's Server API view (a forged payload that was believed would not).
        let kept = truth.filter { !refusedIds.contains($0["original_transaction_id"] as? String ?? "") }
        let file = fixture.directory.appendingPathComponent("truth-unforged.jsonl")
        try Data(
            kept.map { try JSONSerialization.data(withJSONObject: $0) + Data([10]) }.reduce(Data(), +)
        ).write(to: file)
        var comparison = TruthComparison(connection: conn, bundleId: EndToEndFixture.bundleId)
        comparison.serverAPI = true
        let report = try comparison.compare(truthFile: file.path)
        let unfinished = try conn.query(
            """
            SELECT i.original_transaction_id || ': ' || i.outcome || ' ' || coalesce(i.reason, '') AS line
              FROM reconciliation_items i WHERE i.run_id = (SELECT max(id) FROM reconciliation_runs)
               AND i.outcome IN ('unresolved', 'rejected') AND i.reason NOT LIKE 'signed_data_refused%'
            """
        ).map { try $0.decode("line", as: String.self) }
        #expect(report.compared == kept.count)
        #expect(
            report.matched == report.compared,
            Comment(
                rawValue: (report.mismatches.prefix(10).map(\.description) + unfinished.prefix(10)).joined(
                    separator: "\n"
                )
            )
        )
        // The ledger is priced from the signed transactions.
        let priced = try conn.queryFirst(
            """
            SELECT count(*) FILTER (WHERE price_milliunits IS NOT NULL AND currency IS NOT NULL) AS priced,
                   count(DISTINCT currency) AS currencies, count(*) AS total
              FROM subscription_transactions
            """
        )
        #expect(try priced?.decode("priced", as: Int.self) == priced?.decode("total", as: Int.self))
        #expect((try priced?.decode("currencies", as: Int.self) ?? 0) > 2)

        // The simulator's own list of forged subscriptions, and its ledger and revenue, from an export of the
        // same world: the refused rows are exactly the forged ones; every other transaction is in the ledger
        // with Apple's price, currency, storefront and refund; the reports' money per currency, summed over
        // the nights, equals revenue.json less the forged subscriptions'.
        let witness = fixture.directory.appendingPathComponent("witness")
        try await SimulatorProcess.exported(
            binary: BuiltBinary.simulator,
            seed: fixture.seed,
            subscriptions: fixture.subscriptions,
            now: try #require(RFC3339.parse(fixture.now)),
            into: witness.path,
            extra: ["--signature-faulty-subscriptions", "0.05"]
        )
        let forged = try TruthComparison.forgedSubscriptions(
            file: witness.appendingPathComponent("server-api/signature-faults.jsonl").path
        )
        #expect(forged == refusedIds)
        var ledger = LedgerComparison(connection: conn)
        ledger.forgedSubscriptions = forged
        let money = try ledger.compare(exportDirectory: witness.appendingPathComponent("server-api").path)
        #expect(money.transactionsCompared > 1000)
        #expect(money.matches, Comment(rawValue: money.lines().joined(separator: "\n")))
        #expect(money.currencies.count > 2)
    }

    @Test func quietSecondNightAsksOnceForEachSubscription() async throws {
        let fixture = try await EndToEndFixture(subscriptions: 800)
        _ = try await fixture.startSimulator(Self.simulatorLimits)
        let env = try fixture.serverAPIEnvironment()
        let first = try await fixture.run(Self.fast, extraEnvironment: env)
        #expect(first.status == 0, "\(first)")
        // The same instant again, every row: `backfill --all` (a `run` with the same fixed `--now` would not
        // select rows verified at that instant).
        let second = await fixture.runReconciler(
            ["backfill", "--all", "--now", fixture.now, "--report-dir", fixture.reportDirectory] + Self.fast,
            extraEnvironment: env
        )
        #expect(second.status == 0, "\(second)")
        let conn = try fixture.connect()
        defer { conn.close() }
        let row = try conn.queryFirst(
            """
            SELECT count(*) AS items, sum(attempts) AS requests FROM reconciliation_items
             WHERE run_id = (SELECT max(id) FROM reconciliation_runs) AND outcome <> 'rejected'
            """
        )
        let items = try row?.decode("items", as: Int.self) ?? 0
        let requests = try row?.decode("requests", as: Int.self) ?? 0
        #expect(items > 100)
        #expect(Double(requests) / Double(items) <= 1.1, "\(requests) requests for \(items) subscriptions")
    }

    @Test func wrongKeyIdStopsTheRunAtTheFirst401() async throws {
        let fixture = try await EndToEndFixture(subscriptions: 300)
        _ = try await fixture.startSimulator(Self.simulatorLimits)
        let env = try fixture.serverAPIEnvironment(keyId: "WRONGKEY01")
        let outcome = try await fixture.run(["--rate", "2000", "--concurrency", "1"], extraEnvironment: env)
        #expect(outcome.status == 78, "\(outcome)")
        #expect(outcome.stderr.contains("401"), Comment(rawValue: outcome.stderr))
        #expect(!(outcome.stderr.contains("BEGIN PRIVATE KEY")))
        // The first request of the run (Get Notification History, before the scan) is answered 401 and
        // nothing more is sent.
        let stats = try await fixture.simulatorStats()
        let paths = stats["paths"] as? [String: [String: Any]] ?? [:]
        let sent = paths.values.reduce(0) { $0 + ($1["requests"] as? Int ?? 0) }
        #expect(sent == 1, "one request, then the run stops: \(paths)")
        #expect(paths["/inApps/v1/notifications/history"]?["requests"] as? Int == 1)
        #expect((stats["auth_failures"] as? [String: Int])?["kid"] == 1)
        let conn = try fixture.connect()
        defer { conn.close() }
        let row = try conn.queryFirst(
            "SELECT coalesce(sum(attempts), 0) AS requests FROM reconciliation_items WHERE run_id = 1"
        )
        #expect(try row?.decode("requests", as: Int.self) == 0, "no subscription was asked about")
    }
}
