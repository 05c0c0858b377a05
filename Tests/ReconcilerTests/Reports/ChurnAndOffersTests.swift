import Foundation
import Testing

@testable import Reconciler

/// Churn by expiration reason, the offer mix with conversions, and price-increase consent, folded from items and
/// ledger transactions (docs/reports.md, "Churn, offers and price increases").
@Suite struct ChurnAndOffersTests {
    func item(_ outcome: String, state: String, intent: Int? = nil, consent: Int? = nil) -> ReportItem {
        var item = ReportItem(subscriptionId: 1, originalTransactionId: "1", outcome: outcome)
        item.previousState = "active"
        item.newState = state
        item.productId = "pro.monthly"
        item.expirationIntent = intent
        item.priceIncreaseStatus = consent
        return item
    }

    func transaction(
        _ id: String,
        kind: String = "renewal",
        offer: Int?,
        previous: Int?,
        shared: Bool = false
    )
        -> ReportTransaction
    {
        var t = ReportTransaction(
            transactionId: id,
            originalTransactionId: "1",
            productId: "pro.monthly",
            kind: kind,
            ownershipType: shared ? "FAMILY_SHARED" : "PURCHASED"
        )
        t.offerType = offer
        t.previousOfferType = previous
        return t
    }

    func counts(started: Int, converted: Int) -> ChurnAndOffers.OfferCounts {
        var counts = ChurnAndOffers.OfferCounts()
        counts.started = started
        counts.converted = converted
        return counts
    }

    func summary(items: [ReportItem], transactions: [ReportTransaction]) -> ChurnAndOffers? {
        var accumulator = RunSummaryAccumulator()
        for item in items { accumulator.add(item) }
        for transaction in transactions { accumulator.add(transaction) }
        return RunSummary(run: ReportSampleData.data().run, accumulator: accumulator, prices: []).churnAndOffers
    }

    @Test func lapsesAreCountedByApplesExpirationIntent() throws {
        let c = try #require(
            summary(
                items: [
                    item("lapsed", state: "expired", intent: 1), item("lapsed", state: "expired", intent: 1),
                    item("lapsed", state: "billing_retry", intent: 2), item("lapsed", state: "expired", intent: 3),
                    item("lapsed", state: "expired"), item("unchanged", state: "expired", intent: 1),
                ],
                transactions: []
            )
        )
        #expect(c.churnByReason["customer_cancelled"] == 2)
        #expect(c.churnByReason["billing_error"] == 1)
        #expect(c.churnByReason["declined_price_increase"] == 1)
        #expect(c.churnByReason["unknown"] == 1)
        #expect(c.priceIncrease.lapsedDeclined == 1)
    }

    @Test func entitledSubscriptionsAreCountedByTheirPriceIncreaseAnswer() throws {
        let c = try #require(
            summary(
                items: [
                    item("unchanged", state: "active", consent: 0), item("renewed", state: "grace_period", consent: 0),
                    item("unchanged", state: "active", consent: 1), item("lapsed", state: "expired", consent: 0),
                ],
                transactions: []
            )
        )
        #expect(c.priceIncrease.awaitingConsent == 2)
        #expect(c.priceIncrease.consented == 1)
        #expect(c.priceIncrease.awaitingConsentByProduct == ["pro.monthly": 2])
    }

    @Test func offersStartOnceAndConvertOnTheFirstFullPriceRenewal() throws {
        let c = try #require(
            summary(
                items: [],
                transactions: [
                    transaction("a", kind: "initial", offer: 4, previous: nil),  // win-back starts
                    transaction("b", offer: 4, previous: 4),  // its second discounted period: not a new start
                    transaction("c", offer: nil, previous: 4),  // converted
                    transaction("d", offer: 2, previous: nil),  // promotional starts
                    transaction("e", offer: 3, previous: nil, shared: true),  // a family copy: the purchaser's
                    transaction("f", offer: nil, previous: 3, shared: true),
                ]
            )
        )
        #expect(c.offers["win_back"] == counts(started: 1, converted: 1))
        #expect(c.offers["promotional"] == counts(started: 1, converted: 0))
        #expect(c.offers["offer_code"] == counts(started: 0, converted: 0))
    }

    @Test func theReportShowsEachPart() throws {
        var accumulator = RunSummaryAccumulator()
        accumulator.add(item("lapsed", state: "expired", intent: 3))
        accumulator.add(transaction("a", kind: "initial", offer: 4, previous: nil))
        let run = ReportSampleData.data().run
        let summary = RunSummary(run: run, accumulator: accumulator, prices: [])
        let html = ReportHTML.render(
            data: ReportData(run: run, items: [], transactions: [], prices: []),
            summary: summary
        )
        #expect(html.contains("id=\"chart-churn-by-reason\""))
        #expect(html.contains("<td>Declined a price increase</td><td class=\"n\">1</td>"), "\(html)")
        #expect(html.contains("<td>Win-back</td><td class=\"n\">1</td><td class=\"n\">0</td>"))
        #expect(html.contains("id=\"price-increase\""))
        let json = try JSONEncoder().encode(summary)
        let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        let churn = try #require(object["churn_and_offers"] as? [String: Any])
        let reasons = try #require(churn["churn_by_reason"] as? [String: Int])
        #expect(reasons["declined_price_increase"] == 1)
    }
}
