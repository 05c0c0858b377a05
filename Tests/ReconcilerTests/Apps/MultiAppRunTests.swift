import CivilTime
import Foundation
import Postgres
import Reconciler
import ReconcilerDemo
import Testing

/// Several apps in one `subscriptions` table, one run with `--apps` (docs/architecture.md, "Several apps"), end
/// to end with the real binaries: three configured apps (two through verifyReceipt, each with its own shared
/// secret, and one through the Server API), each with its own simulator (its own Apple: bundle id, credentials and
/// rate limit). Every row is reconciled with its own app's credentials, each simulator sees no more than its app's
/// limit in any second, and rows of an app nobody configured end `no_app`, untouched and never rejected.
@Suite struct MultiAppRunTests {
    static let second = "com.example.second"
    static let third = "com.example.third"
    static let thirdSecret = "the-third-apps-own-shared-secret"
    static let unconfigured = "com.example.unconfigured"

    @Test func eachRowIsReconciledWithItsOwnAppsCredentialsAndLimit() async throws {
        // App one: verifyReceipt (the fixture's population, bundle com.example.renewals).
        let fixture = try await EndToEndFixture(subscriptions: 300)
        let asOf = try #require(RFC3339.parse(fixture.now))
        // Another app's population (its own seed and bundle id) exported into `folder` and imported into the table.
        func addApp(_ folder: String, seed: UInt64, subscriptions: Int, bundleId: String) async throws -> URL {
            let url = fixture.directory.appendingPathComponent(folder)
            try await SimulatorProcess.exported(
                binary: EndToEndFixture.simulatorBinary,
                seed: seed,
                subscriptions: subscriptions,
                now: asOf,
                into: url.path,
                extra: ["--bundle-id", bundleId]
            )
            let imported = await fixture.runReconciler([
                "import", "--file", url.appendingPathComponent("purchases.jsonl").path,
            ])
            #expect(imported.status == 0, "\(imported)")
            return url
        }
        // App two, through the Server API; app three, verifyReceipt again with its own shared secret; and the rows of
        // a fourth app that no configured app owns.
        let two = try await addApp("second", seed: 77, subscriptions: 200, bundleId: Self.second)
        let three = try await addApp("third", seed: 55, subscriptions: 150, bundleId: Self.third)
        _ = try await addApp("unconfigured", seed: 91, subscriptions: 20, bundleId: Self.unconfigured)

        // Each app's Apple, with its own limit: 429 for anything above it. The simulator counts arrivals, which
        // the loopback and a busy machine bunch up a little, so its limits sit a little above the app's rate (the
        // Server API's sandbox limit is a tenth, rounded down: 3 for the app's 2.5). The run's own --rate is 2,000:
        // only each app's limit holds it back. The limits are the simulators' only where the test runs alone
        // (`WallClockRates.limit`).
        let simOne = try await fixture.startSimulator(WallClockRates.limit("--max-rps", 44))
        let simTwo = try await SimulatorProcess.started(
            binary: EndToEndFixture.simulatorBinary,
            arguments: [
                "--seed", "77", "--subscriptions", "200", "--now", fixture.now, "--bundle-id", Self.second,
            ] + WallClockRates.limit("--max-rps-statuses", 30) + WallClockRates.limit("--max-rps-history", 30)
                + WallClockRates.limit("--max-rps-notification-history", 30),
            sharedSecret: "the-second-app-has-no-shared-secret"
        )
        defer { simTwo.signal(SIGKILL) }
        let simThree = try await SimulatorProcess.started(
            binary: EndToEndFixture.simulatorBinary,
            arguments: ["--seed", "55", "--subscriptions", "150", "--now", fixture.now, "--bundle-id", Self.third]
                + WallClockRates.limit("--max-rps", 33),
            sharedSecret: Self.thirdSecret
        )
        defer { simThree.signal(SIGKILL) }
        let api = try #require(
            try JSONSerialization.jsonObject(
                with: try Data(contentsOf: two.appendingPathComponent("server-api/api.json"))
            ) as? [String: Any]
        )
        let base = "http://127.0.0.1:\(simTwo.port)"
        let apps: [String: Any] = [
            "apps": [
                [
                    "bundle_id": EndToEndFixture.bundleId, "source": "verify-receipt", "rate": 40,
                    "shared_secret_env": "APP_ONE_SECRET", "verify_url": simOne.productionURL,
                    "sandbox_verify_url": simOne.sandboxURL,
                ],
                [
                    "bundle_id": Self.second, "source": "server-api", "rate": 25,
                    "app_apple_id": try #require(api["app_apple_id"] as? NSNumber),
                    "key_id": try #require(api["key_id"] as? String),
                    "issuer_id": try #require(api["issuer_id"] as? String),
                    "private_key_file": two.appendingPathComponent("server-api/key.p8").path,
                    "server_api_url": base, "server_api_sandbox_url": base + "/sandbox",
                    "root_files": [two.appendingPathComponent("server-api/root.pem").path], "roots_only": true,
                ],
                [
                    "bundle_id": Self.third, "source": "verify-receipt", "rate": 30,
                    "shared_secret_file": three.appendingPathComponent("secret").path,
                    "verify_url": simThree.productionURL, "sandbox_verify_url": simThree.sandboxURL,
                ],
            ]
        ]
        try Data(Self.thirdSecret.utf8).write(to: three.appendingPathComponent("secret"))
        let appsFile = fixture.directory.appendingPathComponent("apps.json")
        try JSONSerialization.data(withJSONObject: apps).write(to: appsFile)

        let metricsFile = fixture.directory.appendingPathComponent("reconciler.prom")
        // The one-app settings of the fixture's environment are ignored: the apps file names everything.
        let run = try await fixture.run(
            ["--apps", appsFile.path, "--rate", "2000", "--concurrency", "32", "--metrics-file", metricsFile.path],
            extraEnvironment: ["APP_ONE_SECRET": fixture.secret, "APPLE_SHARED_SECRET": "a-wrong-secret"]
        )
        #expect(run.status == 0, "\(run)")
        #expect(!run.stderr.contains(fixture.secret), "the shared secret must never be logged")
        #expect(!run.stderr.contains(Self.thirdSecret), "the shared secret must never be logged")

        // Every row of both apps equals its own Apple's truth.
        let one = try fixture.compareWithTruth()
        #expect(one.compared == 300)
        #expect(one.matched == one.compared, "\(one.mismatches.prefix(5))")
        let conn = try fixture.connect()
        defer { conn.close() }
        var comparison = TruthComparison(connection: conn, bundleId: Self.second)
        comparison.serverAPI = true
        let second = try comparison.compare(truthFile: two.appendingPathComponent("truth.jsonl").path)
        #expect(second.compared == 200)
        #expect(second.matched == second.compared, "\(second.mismatches.prefix(5))")
        let third = try TruthComparison(connection: conn, bundleId: Self.third)
            .compare(truthFile: three.appendingPathComponent("truth.jsonl").path)
        #expect(third.compared == 150)
        #expect(third.matched == third.compared, "\(third.mismatches.prefix(5))")

        // No cross-app rejection: the unconfigured app's rows are no_app, untouched and never asked.
        let unconfigured = try conn.query(
            """
            SELECT i.outcome, i.reason, c.last_verified_at IS NULL AS untouched, c.last_verify_status
              FROM reconciliation_items i JOIN subscriptions s ON s.id = i.subscription_id
              LEFT JOIN subscription_checks c ON c.subscription_id = s.id
             WHERE s.bundle_id = $1
            """,
            [Self.unconfigured]
        )
        #expect(unconfigured.count == 20)
        for row in unconfigured {
            #expect(try row.decode("outcome", as: String.self) == "no_app")
            #expect(try row.decode("untouched", as: Bool.self))
            #expect(try row.decode("last_verify_status", as: String?.self) == nil)
            #expect(
                try row.decode("reason", as: String?.self) == "no app configured for bundle id \(Self.unconfigured)"
            )
        }
        // A receipt of one configured app is never rejected as another's. (Each population also has receipts of an
        // app nobody configured stored in its rows, `com.example.otherapp`: those are rightly rejected, and the truth
        // comparisons above expect it.)
        let crossApp = try conn.queryFirst(
            """
            SELECT count(*) AS n FROM subscription_checks
             WHERE last_error LIKE '%receipt is for%' AND last_error NOT LIKE '%receipt is for com.example.otherapp%'
            """
        )
        #expect(try crossApp?.decode("n", as: Int.self) == 0)
        #expect(
            try conn.count(
                "SELECT count(*) AS n FROM subscription_checks WHERE last_error LIKE '%receipt is for com.example.otherapp%'"
            ) > 0,
            "the check above looks at the right text: the foreign receipts of the populations are named this way"
        )

        // The report's per-app breakdown: each app's items and the requests made for them.
        let runId = try #require(
            try conn.queryFirst("SELECT max(id) AS id FROM reconciliation_runs")?.decode("id", as: Int64.self)
        )
        let byApp = try #require(try fixture.summary(runId: runId)["by_app"] as? [[String: Any]])
        let perApp = Dictionary(
            uniqueKeysWithValues: byApp.compactMap { app in (app["id"] as? String).map { ($0, app) } }
        )
        #expect(Set(perApp.keys) == [EndToEndFixture.bundleId, Self.second, Self.third, Self.unconfigured])
        #expect(perApp[EndToEndFixture.bundleId]?["selected"] as? Int == 300)
        #expect(perApp[Self.second]?["selected"] as? Int == 200)
        #expect(perApp[Self.third]?["selected"] as? Int == 150)
        #expect((perApp[Self.third]?["requests"] as? Int ?? 0) >= 150)
        #expect((perApp[EndToEndFixture.bundleId]?["requests"] as? Int ?? 0) >= 300)
        #expect((perApp[Self.second]?["requests"] as? Int ?? 0) >= 200)
        #expect(perApp[Self.unconfigured]?["requests"] as? Int == 0)
        #expect((perApp[Self.unconfigured]?["by_outcome"] as? [String: Int])?["no_app"] == 20)
        // The metrics file has the same breakdown for the configured apps, for alerting per app; the rows of apps
        // the run was not configured for share one series, so junk bundle ids cannot grow the file.
        let metrics = try String(contentsOf: metricsFile, encoding: .utf8)
        #expect(metrics.contains("renewal_reconciler_last_run_app_items{app=\"(other)\",outcome=\"no_app\"} 20\n"))
        #expect(!metrics.contains(Self.unconfigured))
        for app in [EndToEndFixture.bundleId, Self.second, Self.third] {
            let requests = try #require(perApp[app]?["requests"] as? Int)
            #expect(metrics.contains("renewal_reconciler_last_run_app_apple_requests{app=\"\(app)\"} \(requests)\n"))
        }

        // Each Apple saw its own app's requests only, within its limit in every second (counted on the wall clock:
        // only where the test runs alone, `WallClockRates`).
        let statsOne = try await EndToEndFixture.simulatorStats(port: simOne.port)
        let statsTwo = try await EndToEndFixture.simulatorStats(port: simTwo.port)
        #expect(try #require(statsOne["requests_total"] as? Int) >= 300)
        if WallClockRates.checked {
            #expect(statsOne["rate_limited"] as? Int == 0, "\(statsOne)")
            #expect(try #require(statsOne["peak_requests_per_second"] as? Int) <= 44, "\(statsOne)")
        }
        let pathsOne = try #require(statsOne["paths"] as? [String: Any])
        #expect(pathsOne.keys.allSatisfy { $0.hasSuffix("verifyReceipt") }, "\(pathsOne.keys)")
        // App three's Apple: its own secret accepted (a wrong one would answer 21004 and fail the truth above).
        let statsThree = try await EndToEndFixture.simulatorStats(port: simThree.port)
        #expect(try #require(statsThree["requests_total"] as? Int) >= 150)
        if WallClockRates.checked {
            #expect(statsThree["rate_limited"] as? Int == 0, "\(statsThree)")
            #expect(try #require(statsThree["peak_requests_per_second"] as? Int) <= 33, "\(statsThree)")
        }
        let limitsTwo = try #require(statsTwo["server_api_limits"] as? [String: [String: Any]])
        #expect(!limitsTwo.isEmpty)
        for (endpoint, figures) in limitsTwo where WallClockRates.checked {
            #expect(figures["rate_limited"] as? Int == 0, "\(endpoint): \(limitsTwo)")
            // The app's rate (25/s, sandbox a tenth: 2.5/s) plus the arrivals' bunching.
            let limit = endpoint.hasPrefix("/sandbox/") ? 3 : 28
            #expect(try #require(figures["peak_admitted_per_second"] as? Int) <= limit, "\(endpoint): \(figures)")
        }
        let pathsTwo = try #require(statsTwo["paths"] as? [String: Any])
        #expect(!pathsTwo.keys.contains { $0.hasSuffix("verifyReceipt") }, "\(pathsTwo.keys)")
    }
}
