import Foundation
import Postgres
import Reconciler
import TestSupport
import Testing

/// Every numeric flag and apps-file value is checked against its documented bound when it is parsed
/// (docs/operations.md, "Bounds of every numeric setting"): an absurd value is exit 64 (a flag) or 78 (the apps
/// file) naming the setting and its allowed range, and no run is created in the database. Each case runs the
/// built binary against a migrated, empty database.
@Suite struct BoundsRunTests {
    /// One refused value: the command line, and what the error must say.
    struct Refusal: CustomTestStringConvertible, Sendable {
        var arguments: [String]
        var expected: String
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static let rateRange = "from 0.1 to 1000000 requests per second"
    static let timeoutRange = "from 0.1 to 3600 seconds"

    /// Values that crashed a run (a Double converted to Int) with the run left `running`.
    static let crashing: [Refusal] = [
        Refusal(arguments: ["run", "--rate", "1e19"], expected: "--rate must be \(rateRange), got 1e+19"),
        Refusal(arguments: ["run", "--rate", "1e308"], expected: "--rate must be \(rateRange), got 1e+308"),
        Refusal(
            arguments: ["run", "--request-timeout", "1e308"],
            expected: "--request-timeout must be \(timeoutRange), got 1e+308"
        ),
        Refusal(
            arguments: ["run", "--connect-timeout", "1e308"],
            expected: "--connect-timeout must be \(timeoutRange), got 1e+308"
        ),
        Refusal(arguments: ["backfill", "--all", "--rate", "1e19"], expected: "--rate must be \(rateRange)"),
    ]

    /// Values that were accepted and failed late (after the run was created) or never.
    static let lateOrNever: [Refusal] = [
        Refusal(
            arguments: ["run", "--worker", "--heartbeat", "0s"],
            expected: "--heartbeat must be from 1s to 1h, got 0s"
        ),
        Refusal(arguments: ["run", "--rate", "1e-9"], expected: "--rate must be \(rateRange), got 1e-09"),
        Refusal(
            arguments: ["run", "--lookahead", "99999999999d"],
            expected: "--lookahead must be from 0s to 3650d, got 99999999999d"
        ),
        Refusal(
            arguments: ["run", "--max-attempts", "100000000000"],
            expected: "--max-attempts must be from 1 to 100, got 100000000000"
        ),
    ]

    /// Every other numeric flag, just past its bound.
    static let others: [Refusal] = [
        Refusal(arguments: ["run", "--statuses-rate", "1e308"], expected: "--statuses-rate must be \(rateRange)"),
        Refusal(arguments: ["run", "--history-rate", "0.01"], expected: "--history-rate must be \(rateRange)"),
        Refusal(
            arguments: ["run", "--notifications-rate", "nan"],
            expected: "--notifications-rate must be \(rateRange)"
        ),
        Refusal(arguments: ["run", "--concurrency", "100000"], expected: "--concurrency must be from 1 to 1024"),
        Refusal(arguments: ["run", "--batch-size", "10001"], expected: "--batch-size must be from 1 to 10000"),
        Refusal(arguments: ["run", "--max-unresolved", "1.5"], expected: "--max-unresolved must be from 0 to 1"),
        Refusal(
            arguments: ["run", "--outage-failures", "10000000"],
            expected: "--outage-failures must be from 0 to 1000000"
        ),
        Refusal(arguments: ["run", "--outage-window", "8d"], expected: "--outage-window must be from 0s to 7d"),
        Refusal(arguments: ["run", "--request-timeout", "0"], expected: "--request-timeout must be \(timeoutRange)"),
        Refusal(
            arguments: ["run", "--notifications-lookback", "181d"],
            expected: "--notifications-lookback must be from 1s to 180d"
        ),
        Refusal(arguments: ["run", "--lookback", "1e308d"], expected: "--lookback must be from 0s to 3650d"),
        Refusal(arguments: ["run", "--min-recheck", "3651d"], expected: "--min-recheck must be from 0s to 3650d"),
        Refusal(
            arguments: ["run", "--recheck-revoked", "600w"],
            expected: "--recheck-revoked must be from 0s to 3650d"
        ),
        Refusal(
            arguments: ["run", "--recheck-rejected", "1d,99999d"],
            expected: "--recheck-rejected: each step must be from 1s to 3650d"
        ),
        Refusal(arguments: ["run", "--sweep-days", "100000"], expected: "--sweep-days must be from 0 to 3650"),
        Refusal(
            arguments: ["run", "--worker", "--lease-timeout", "1e9s"],
            expected: "--lease-timeout must be from 3s to 1d"
        ),
        Refusal(
            arguments: ["run", "--heartbeat", "20s"],
            expected: "--lease-timeout must be at least 3 heartbeats (--heartbeat 20s: at least 1m), got 30s"
        ),
        Refusal(
            arguments: ["run", "--worker", "--join-window", "30d"],
            expected: "--join-window must be from 0s to 7d"
        ),
        Refusal(arguments: ["report", "--trends", "--days", "100000"], expected: "--days must be from 1 to 3660"),
        Refusal(arguments: ["runs", "--limit", "0"], expected: "--limit must be from 1 to 100000"),
        Refusal(
            arguments: ["compare-truth", "--truth", "/dev/null", "--limit=-5"],
            expected: "--limit must be from 0 to 1000000"
        ),
        Refusal(
            arguments: ["demo", "--subscriptions", "1", "--rate", "1e19"],
            expected: "--rate must be \(rateRange)"
        ),
        Refusal(
            arguments: ["demo", "--subscriptions", "1", "--concurrency", "0"],
            expected: "--concurrency must be from 1 to 1024"
        ),
    ]

    @Test(arguments: crashing)
    func absurdNumbersAreRefusedBeforeTheRunInsteadOfCrashingIt(_ refusal: Refusal) async throws {
        try await expectRefused(refusal)
    }

    @Test(arguments: lateOrNever)
    func badValuesAreRefusedAtParseTimeNotAfterTheRunStarted(_ refusal: Refusal) async throws {
        try await expectRefused(refusal)
    }

    @Test(arguments: others)
    func everyOtherNumericFlagIsBounded(_ refusal: Refusal) async throws {
        try await expectRefused(refusal)
    }

    @Test func anAppsFileRateOutsideItsBoundIsAConfigurationErrorBeforeTheRun() async throws {
        let fixture = try await EndToEndFixture(subscriptions: 0)
        let apps = fixture.directory.appendingPathComponent("apps.json")
        try Data(
            """
            {"apps": [{"bundle_id": "com.example.news", "source": "verify-receipt", "rate": 1e-7,
                       "shared_secret_env": "NEWS_SECRET", "verify_url": "http://127.0.0.1:9/verifyReceipt",
                       "sandbox_verify_url": "http://127.0.0.1:9/sandbox"}]}
            """.utf8
        ).write(to: apps)
        let outcome = await fixture.runReconciler(
            ["run", "--apps", apps.path, "--report-dir", fixture.reportDirectory],
            extraEnvironment: ["NEWS_SECRET": "news-secret-value"]
        )
        #expect(outcome.status == 78, "\(outcome)")
        #expect(
            outcome.stderr.contains(
                "--apps: \(apps.path): apps[0] (com.example.news): rate: must be \(Self.rateRange), got 1e-07"
            ),
            "\(outcome)"
        )
        #expect(!outcome.stderr.contains("news-secret-value"))
        #expect(try runCount(fixture) == 0)
    }

    /// Runs `refusal`'s command line against a migrated, empty database (a refused value must stop it before
    /// anything else; a value let through finishes quickly there, or is killed after a minute).
    private func expectRefused(_ refusal: Refusal) async throws {
        let fixture = try await EndToEndFixture(subscriptions: 0)
        var arguments = refusal.arguments
        if ["run", "backfill"].contains(arguments[0]) { arguments += ["--report-dir", fixture.reportDirectory] }
        let outcome = try await RunningProcess(
            EndToEndFixture.reconcilerBinary,
            arguments,
            environment: Self.environment(fixture),
            directory: fixture.directory
        ).wait(limit: 60)
        #expect(outcome.reason == .exit && outcome.status == 64, "\(outcome)")
        #expect(outcome.stderr.contains(refusal.expected), "\(outcome)")
        #expect(try runCount(fixture) == 0, "a run was created")
    }

    /// The fixture's environment with Apple at a closed loopback port: nothing leaves the machine.
    private static func environment(_ fixture: EndToEndFixture) -> [String: String] {
        var env = fixture.environment
        env["APPLE_VERIFY_URL"] = "http://127.0.0.1:9/verifyReceipt"
        env["APPLE_SANDBOX_VERIFY_URL"] = "http://127.0.0.1:9/sandbox"
        return env
    }

    private func runCount(_ fixture: EndToEndFixture) throws -> Int {
        let connection = try fixture.connect()
        defer { connection.close() }
        return try connection.count("SELECT count(*) AS n FROM reconciliation_runs")
    }
}
