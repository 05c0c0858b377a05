import AppStoreSimulator
import Foundation
import Postgres
import TestSupport
import Testing

/// `apple-reports download --reports subscription_event subscription` through the built binary, against the
/// simulator (docs/simulator.md, "Subscription Event report", "Subscription report") and a real PostgreSQL: each day's
/// two reports stored once with the request's day, and a second download asking for
/// nothing already stored.
@Suite struct SubscriptionReportsDownloadTests {
    @Test func eachDaysTwoReportsAreStoredOnceWithTheRequestsDay() async throws {
        let world = try await EndToEndFixture(subscriptions: 0)
        let simulator = try ReportSimulator.start(seed: 42, subscriptions: 1500, in: world.directory)
        defer { try? simulator.server.shutdown() }
        let identity = simulator.identity
        // The simulator's clock is 1 December 2026: 30 November's reports come out at 8 a.m. Pacific on 1 December.
        func download() async -> ProcessOutcome {
            await world.runReconciler([
                "apple-reports", "download", "--api-url", simulator.server.baseURL, "--from", "2026-11-19", "--to",
                "2026-11-20", "--reports", "subscription_event", "subscription", "--key-file", simulator.teamKeyFile,
                "--key-id", identity.teamKeyId, "--issuer-id", identity.issuerId, "--vendor-number",
                identity.vendorNumber,
            ])
        }
        let first = await download()
        #expect(first.status == 0, "\(first)")
        for line in [
            "subscription_event 2026-11-19: stored as file", "subscription 2026-11-19: stored as file",
            "subscription_event 2026-11-20: stored as file", "subscription 2026-11-20: stored as file",
            "4 reports: 4 stored",
        ] {
            #expect(first.stdout.contains(line), "\(line)\n\(first)")
        }
        let conn = try world.connect()
        defer { conn.close() }
        let files = try conn.query("SELECT kind, period_start::text AS day FROM apple_report_files ORDER BY id")
        #expect(
            try files.map { try $0.decode("kind", as: String.self) + " " + $0.decode("day", as: String.self) } == [
                "subscription_event 2026-11-19", "subscription 2026-11-19", "subscription_event 2026-11-20",
                "subscription 2026-11-20",
            ]
        )
        let active = try conn.queryFirst("SELECT sum(subscribers)::int AS n FROM apple_subscription_rows")
        #expect(try (active?.decode("n", as: Int?.self) ?? 0) > 0)

        let second = await download()
        #expect(second.status == 0, "\(second)")
        #expect(second.stdout.contains("4 reports: 4 already stored"), "\(second)")
        let count = try conn.queryFirst("SELECT count(*) AS n FROM apple_report_files")?.decode("n", as: Int.self)
        #expect(count == 4)
    }
}
