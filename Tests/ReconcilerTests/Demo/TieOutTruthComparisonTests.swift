import AppleReports
import Foundation
import Testing

@testable import Reconciler
@testable import ReconcilerDemo

/// `demo --tie-out`'s money checks (docs/tie-out.md, "The demo") on a hand-made tie-out and sales truth: each holds
/// when a difference sits under the cause the truth knows, and fails when one event's worth sits under another.
@Suite struct TieOutTruthComparisonTests {
    /// Fiscal October 2026: 27 September to 31 October.
    static let october = AppleFiscalMonth(containing: PacificDay("2026-10-10")!)

    /// A sale of 9.99 EUR in Germany (19% tax) at the first-year rate: 6.99 at Apple's rate, Apple pays
    /// 9.99 x 70 / 119 = 5.88; sold on 30 October, settled on 2 November (the next fiscal month).
    static let truthLines = [
        #"{"kind":"purchase","pacific_day":"2026-10-30","subscription_apple_id":"1","country":"DE","currency":"EUR","#
            + #""customer_price":9990,"proceeds":5880,"tax_percent":19,"after_one_year":false,"#
            + #""settlement_day":"2026-11-02","lost_order":false}"#
    ]

    func comparison(
        _ rows: [(TieOutRow.View, TieOutRow.Measure, TieOutCause, Int64, Int64)]
    ) throws
        -> TieOutTruthComparison
    {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("truth-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: path) }
        try Self.truthLines.joined(separator: "\n").write(to: path, atomically: true, encoding: .utf8)
        let result = TieOutResult(
            from: PacificDay("2026-09-27")!,
            to: PacificDay("2026-10-31")!,
            fiscalMonth: Self.october,
            fiscalMonthsCompared: [Self.october],
            rows: rows.map { view, measure, cause, ledger, difference in
                var row = TieOutRow(
                    key: .init(
                        view: view,
                        period: view == .daily ? "2026-10-30" : "2026-10",
                        productId: "monthly",
                        country: "DE",
                        currency: "EUR",
                        measure: measure,
                        cause: cause,
                        appleCurrency: "EUR"
                    )
                )
                row.ledgerAmount = ledger
                row.difference = difference
                row.events = 1
                return row
            },
            appleOnly: [],
            ledgerOnly: [],
            headline: [],
            notes: [],
            commission: .standard
        )
        return try TieOutTruthComparison(result: result, truthFile: path.path)
    }

    @Test func eachCauseWhereTheTruthPutsItHolds() throws {
        let c = try comparison([
            (.daily, .proceeds, .matched, 6990, 0), (.daily, .proceeds, .tax, 0, 1110),
            (.monthly, .partnerShare, .timing, 0, 5880),
        ])
        #expect(c.tax().holds, "\(c.tax())")
        #expect(c.commissionTier().holds, "\(c.commissionTier())")
        #expect(c.settlementTiming().holds, "\(c.settlementTiming())")
        #expect(c.unplanted().holds)
    }

    @Test func taxReadAsCommissionTierFailsBoth() throws {
        let c = try comparison([(.daily, .proceeds, .matched, 6990, 0), (.daily, .proceeds, .commissionTier, 0, 1110)])
        #expect(!c.tax().holds)
        #expect(!c.commissionTier().holds)
        #expect(c.tax().expected == "DE EUR 1110" && c.tax().actual == "none")
    }

    @Test func aLedgerEstimateAtAnotherRateIsCommissionTier() throws {
        // The ledger estimated 85% (8.49): 1.50 of the difference is the commission tier, the rest tax.
        let tiered = try comparison([
            (.daily, .proceeds, .matched, 8490, 0), (.daily, .proceeds, .commissionTier, 0, 1500),
            (.daily, .proceeds, .tax, 0, 1110),
        ])
        #expect(tiered.commissionTier().holds && tiered.tax().holds)
        let untiered = try comparison([(.daily, .proceeds, .matched, 8490, 0), (.daily, .proceeds, .tax, 0, 2610)])
        #expect(!untiered.commissionTier().holds && !untiered.tax().holds)
    }

    @Test func settlementTimingMissingOrInTheDailyViewFails() throws {
        let missing = try comparison([(.daily, .proceeds, .matched, 6990, 0), (.daily, .proceeds, .tax, 0, 1110)])
        #expect(!missing.settlementTiming().holds)
        #expect(missing.settlementTiming().expected == "EUR 5880")
        let daily = try comparison([(.daily, .customerPrice, .timing, 0, 9990)])
        #expect(!daily.unplanted().holds)
    }

    @Test func halfwayAmountsAloneLeaveRoomForRounding() {
        func event(_ price: Int64, _ currency: String, afterOneYear: Bool) -> TieOutTruthComparison.TruthEvent {
            .init(
                kind: "purchase",
                pacificDay: "2026-10-01",
                subscriptionAppleId: "1",
                country: "BR",
                currency: currency,
                customerPrice: price,
                afterOneYear: afterOneYear
            )
        }
        // 14.90 x 85% = 12.665: halfway, one centavo of room; 9.99 x 70% = 6.993: none.
        #expect(TieOutTruthComparison.atAppleRate(event(14900, "BRL", afterOneYear: true)) == (12670, 10))
        #expect(TieOutTruthComparison.atAppleRate(event(9990, "USD", afterOneYear: false)) == (6990, 0))
        #expect(TieOutTruthComparison.atAppleRate(event(-14900, "BRL", afterOneYear: true)) == (-12670, 10))
        #expect(TieOutTruthComparison.atAppleRate(event(1_500_000, "JPY", afterOneYear: false)) == (1_050_000, 0))
    }
}
