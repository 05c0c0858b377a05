import CivilTime
import Foundation
import Postgres
import Reconciler
import ReconcilerDemo
import TestSupport
import Testing

/// The report's "Churn, offers and price increases" figures of a first night through the App Store Server API
/// against the simulator's truth, as `demo --source server-api` compares them (`ChurnComparison`), end to end with
/// the real binaries: churn by reason, price increases and the offer mix match, and a ledger changed after the run
/// makes the offer figures differ.
@Suite struct ChurnComparisonTests {
    @Test func firstNightsChurnOffersAndPriceIncreasesMatchTheTruth() async throws {
        // Three days after the population's anchor: offers bought before it convert on the night's day (a first
        // run's period, the calendar day of its as-of), several offer types among them.
        let fixture = try await EndToEndFixture(
            subscriptions: 2000,
            now: "2026-11-24T23:00:00Z",
            anchor: "2026-11-21T23:00:00Z",
            seedPriorRuns: true
        )
        _ = try await fixture.startSimulator(ServerAPIRunTests.simulatorLimits)
        let env = try fixture.serverAPIEnvironment()
        let night = try await fixture.run(
            ServerAPIRunTests.fast + ["--notifications-lookback", "180d"],
            extraEnvironment: env
        )
        #expect(night.status == 0, "\(night)")
        let conn = try fixture.connect()
        defer { conn.close() }
        let runId = Int64(try conn.count("SELECT max(id) AS n FROM reconciliation_runs"))
        let report = try ChurnComparison(connection: conn).compare(
            truthFile: fixture.truthFile,
            runId: runId,
            forged: []
        )
        #expect(report.matches, Comment(rawValue: report.lines().joined(separator: "\n")))
        let offers = report.figures.filter { $0.key.hasPrefix("offers/") }
        #expect(offers.count == 2 * ChurnAndOffers.offerTypes.count, "\(offers.keys.sorted())")
        let converting = offers.filter { $0.key.hasSuffix("/converted") && $0.value.expected > 0 }
        #expect(converting.count >= 2, "conversions of several offer types: \(report.lines())")
        #expect(report.lines().contains { $0.hasPrefix("  offers started/converted: introductory ") })

        // A full-price renewal of the period that the ledger now says was a win-back offer: the report counts an
        // offer started (or one converted fewer), the truth does not.
        let start = try #require(RFC3339.parse("2026-11-24T00:00:00Z"))
        let changed = try conn.execute(
            """
            UPDATE subscription_transactions SET offer_type = 4
             WHERE transaction_id = (SELECT transaction_id FROM subscription_transactions
                                      WHERE kind = 'renewal' AND offer_type IS NULL AND ownership_type = 'PURCHASED'
                                        AND purchase_date > $1
                                      ORDER BY transaction_id LIMIT 1)
            """,
            [start]
        )
        #expect(changed.rowsAffected == 1)
        let differing = try ChurnComparison(connection: conn).compare(
            truthFile: fixture.truthFile,
            runId: runId,
            forged: []
        )
        #expect(!differing.matches)
        #expect(
            differing.lines().contains { $0.hasPrefix("  offers/win_back/") },
            Comment(rawValue: differing.lines().joined(separator: "\n"))
        )
    }
}
