import Foundation
import Reconciler
import Testing

@Suite struct ReportSummaryTests {
    @Test func countsOutcomesStatesAndGroups() throws {
        let summary = RunSummary(data: ReportSampleData.data())
        #expect(summary.schemaVersion == 1)
        #expect(summary.counts.selected == 11)
        #expect(summary.counts.done == 10)
        #expect(summary.counts.pending == 1)
        #expect(summary.counts.unresolved == 1)
        #expect(summary.counts.verified == 9)
        #expect(summary.counts.errors == 3)
        // renewed, lapsed(3), recovered, revoked, changed, lapsed(10): unchanged and errors excluded.
        #expect(summary.counts.changed == 6)
        // Items 5 (refund) and 6 (earlier expiry, product change); never errors or pending items.
        #expect(summary.counts.expiryMovedBackwards == 2)
        #expect(summary.byOutcome["lapsed"] == 2)
        #expect(summary.byOutcome["pending"] == 1)
        #expect(summary.byOutcome["unchanged"] == 1)
        #expect(summary.byNewState["active"] == 5)
        #expect(summary.byNewState[ReportOutcome.unknown] == 2)
        let team = try #require(summary.byProduct.first { $0.id == "team.monthly" })
        #expect(team.selected == 2)
        #expect(team.byOutcome["unresolved"] == 1)
        #expect(summary.bySubscriptionGroup.map(\.id) == [ReportOutcome.unknown, "g1", "g2"])
        #expect(summary.exitStatus == "success")
        #expect(summary.durationSeconds == 300)
        #expect(summary.asOf == "2024-05-01T00:00:00Z")
    }

    @Test func transactionsFunnelAndConversions() {
        let summary = RunSummary(data: ReportSampleData.data())
        #expect(summary.transactions.total == 6)
        #expect(
            summary.transactions.firstSeenByKind == [
                "initial": 1, "renewal": 3, "upgrade": 1, "refund": 0, "one_time": 0,
            ]
        )
        #expect(summary.transactions.refundsSeen == 1)
        #expect(summary.transactions.trialsStarted == 1)
        #expect(summary.transactions.trialConversions == 1)
        #expect(summary.transactions.introOfferConversions == 1)
        #expect(summary.transactions.trialsLapsed == 1)
        // Items 4 (billing_retry -> active) and 10 (grace -> billing_retry); 8 is unresolved, so not decided.
        #expect(summary.retryFunnel.inRetryOrGraceBefore == 2)
        #expect(summary.retryFunnel.recovered == 1)
        #expect(summary.retryFunnel.stillInBillingRetry == 1)
        #expect(summary.retryFunnel.enteredBillingRetry == 0)
    }

    @Test func moneyUsesDecimalAndNamesMissingPrices() {
        let money = RunSummary(data: ReportSampleData.data()).money
        // Paid purchases of the period at the catalog price: two pro.monthly renewals and the pro.yearly upgrade,
        // 9.99 + 9.99 + 79.99 = 99.97 exactly; the refund valued in full.
        #expect(money.renewalRevenue == [.init(currency: "USD", amount: "99.97", transactions: 3)])
        #expect(money.refunded == [.init(currency: "USD", amount: "9.99", transactions: 1)])
        #expect(money.catalog.currencies["USD"]?.totals.grossMilliunits == 99970)
        #expect(money.catalog.currencies["USD"]?.totals.netMilliunits == 89980)
        #expect(money.catalog.currencies["USD"]?.source == "catalog (products table)")
        // The paid team.monthly renewal has no price: counted, never valued; its free trial counts nowhere.
        #expect(money.catalogUnpriced == [.init(productId: "team.monthly", reason: .noCatalogPrice, purchases: 1)])
        #expect(money.productsWithoutPrice == ["team.monthly"])
        #expect(MoneySummary.format(Decimal(string: "0.1")! + Decimal(string: "0.2")!) == "0.30")
        #expect(MoneySummary.format(Decimal(string: "1.2345")!) == "1.2345")
    }

    @Test func summaryJSONHasEveryKeyIncludingNulls() throws {
        let summary = RunSummary(
            data: ReportSampleData.data(status: "running", exitCode: nil).withRun { $0.finishedAt = nil }
        )
        let object = try #require(try JSONSerialization.jsonObject(with: summary.jsonData()) as? [String: Any])
        #expect(object["schema_version"] as? Int == 1)
        #expect(object["finished_at"] is NSNull)
        #expect(object["exit_code"] is NSNull)
        #expect(object["exit_status"] as? String == "unknown")
        let counts = try #require(object["counts"] as? [String: Any])
        #expect(counts["due"] as? Int == 11)
        #expect(counts["expiry_moved_backwards"] as? Int == 2)
        let apple = try #require(object["apple"] as? [String: Any])
        #expect(apple["by_apple_status"] as? [String: Int] == ["0": 11, "21002": 2])
        let decoded = try JSONDecoder().decode(RunSummary.self, from: summary.jsonData())
        #expect(decoded == summary)
    }

    @Test func backwardsMovesOfErrorItemsAreNotCounted() {
        var data = ReportSampleData.data()
        // A conflict or rejection wrote nothing: a flag on it (impossible from the store) must not count.
        data.items[6].expiryMovedBackwards = true
        data.items[8].expiryMovedBackwards = true
        #expect(RunSummary(data: data).counts.expiryMovedBackwards == 2)
    }

    @Test func aSummaryWrittenBeforeTheBackwardsCountDecodesWithZero() throws {
        let summary = RunSummary(data: ReportSampleData.data())
        var object = try #require(try JSONSerialization.jsonObject(with: summary.jsonData()) as? [String: Any])
        var counts = try #require(object["counts"] as? [String: Any])
        counts.removeValue(forKey: "expiry_moved_backwards")
        object["counts"] = counts
        let old = try JSONSerialization.data(withJSONObject: object)
        let decoded = try JSONDecoder().decode(RunSummary.self, from: old)
        #expect(decoded.counts.expiryMovedBackwards == 0)
        #expect(decoded.counts.changed == summary.counts.changed)
    }
}

extension ReportData {
    func withRun(_ change: (inout ReportRun) -> Void) -> ReportData {
        var copy = self
        change(&copy.run)
        return copy
    }
}
