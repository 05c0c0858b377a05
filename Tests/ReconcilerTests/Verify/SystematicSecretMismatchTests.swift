import Foundation
import Postgres
import Reconciler
import Testing

/// 21004 for every request (the simulator's `--fault-21004-all`, as when the shared secret is wrong): the run
/// stops early with exit 78 and changes no entitlement. One 21004 among good answers (the population's
/// `foreign_secret_receipt` rows) only rejects that receipt: the end-to-end tests cover it.
@Suite struct SystematicSecretMismatchTests {
    @Test func aRunWhoseAnswersAreAll21004StopsEarlyWithExit78() async throws {
        let world = try await EndToEndFixture(subscriptions: 1000, seed: 41)
        try await world.startSimulator(["--fault-21004-all"])
        let outcome = try await world.run(["--rate", "2000", "--concurrency", "16"])
        #expect(outcome.reason == .exit)
        #expect(outcome.status == 78, "\(outcome)")

        let stats = try await world.simulatorStats()
        let requests = try #require(stats["requests_total"] as? Int)
        #expect(requests > 0 && requests < 500, "the run went on for \(requests) requests")

        let conn = try world.connect()
        defer { conn.close() }
        #expect(try conn.count("SELECT count(*) AS n FROM subscriptions WHERE state IS NOT NULL") == 0)
        #expect(try conn.count("SELECT count(*) AS n FROM subscription_transactions") == 0)
    }
}
