import Testing

@testable import Reconciler

/// Family Sharing in the money (docs/reports.md, "Money per currency"): a family member's copy of another person's
/// purchase (`FAMILY_SHARED`) is never gross, and its `FAMILY_REVOKE` revocation (the purchaser stopped sharing)
/// is counted apart, never as a refund.
@Suite struct FamilySharingMoneyTests {
    static func transaction(
        _ id: String,
        kind: String = "renewal",
        ownership: String,
        refunded: String? = nil
    ) -> ReportTransaction {
        ReportTransaction(
            transactionId: id,
            originalTransactionId: id + "-o",
            productId: "pro.monthly",
            kind: kind,
            ownershipType: ownership,
            firstSeenInRun: refunded == nil,
            refundSeenInRun: refunded != nil,
            priceMilliunits: 9990,
            currency: "USD",
            revocationType: refunded,
            revocationPercentage: refunded == "REFUND_FULL" ? 100_000 : nil
        )
    }

    @Test func aFamilyMembersCopyIsNeverMoneyAndItsRevocationIsNoRefund() {
        var accumulator = RunSummaryAccumulator()
        accumulator.add(Self.transaction("P1", ownership: "PURCHASED"))
        accumulator.add(Self.transaction("F1", ownership: "FAMILY_SHARED"))
        accumulator.add(Self.transaction("P2", kind: "refund", ownership: "PURCHASED", refunded: "REFUND_FULL"))
        accumulator.add(Self.transaction("F2", kind: "refund", ownership: "FAMILY_SHARED", refunded: "FAMILY_REVOKE"))

        var usd = LedgerMoneyFigures(currency: "USD")
        for line in (accumulator.ledgerMoney["USD"] ?? [:]).values { usd.add(line) }
        #expect(usd.paidTransactions == 1)
        #expect(usd.grossMilliunits == 9990)
        #expect(usd.fullRefunds == 1)
        #expect(usd.refundedMilliunits == 9990)
        #expect(accumulator.transactions.refundsSeen == 1)
        #expect(accumulator.transactions.familyRevocationsSeen == 1)
        #expect(!Self.transaction("F3", ownership: "FAMILY_SHARED").isMoney)
        #expect(Self.transaction("P3", ownership: "PURCHASED").isMoney)
    }
}
