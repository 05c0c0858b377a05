import Foundation
import ReceiptDomain
import Testing

/// What a decision keeps beside the entitlement (docs/decision-rules.md, "What the row keeps beside the
/// entitlement"): the customer's ids from the renewal info or the transaction that gives the expiry, and the next
/// renewal's terms from the renewal info alone.
@Suite struct CustomerFactsDecisionTests {
    let now = Date(timeIntervalSince1970: 1_795_000_000)
    let otid = "3000000000000001"
    let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138"

    func transaction(
        _ id: String,
        purchased days: Double,
        token: String?,
        appTransactionId: String?
    )
        -> ReceiptTransaction
    {
        var t = ReceiptTransaction(
            transactionId: id,
            originalTransactionId: otid,
            productId: "pro.monthly",
            purchaseDate: now.addingTimeInterval(days * 86_400),
            expiresDate: now.addingTimeInterval((days + 30) * 86_400),
            appAccountToken: token
        )
        t.signedFacts = SignedTransactionFacts(
            priceMilliunits: 9990,
            currency: "EUR",
            appAccountToken: token,
            appTransactionId: appTransactionId
        )
        return t
    }

    func decide(_ transactions: [ReceiptTransaction], renewal: PendingRenewalInfo) -> Decision {
        DecisionEngine.decide(
            stored: StoredSubscription(originalTransactionId: otid, userId: "u", productId: "pro.monthly"),
            evidence: SubscriptionEvidence(
                status: 1,
                environment: .production,
                bundleId: "com.example.app",
                transactions: transactions,
                renewalInfo: [renewal]
            ),
            now: now,
            bundleId: "com.example.app"
        )
    }

    @Test func theLatestTransactionsIdsAndTheRenewalInfosTermsAreKept() {
        var renewal = PendingRenewalInfo(originalTransactionId: otid, autoRenewStatus: true, priceConsentStatus: 0)
        renewal.renewalPriceMilliunits = 12_990
        renewal.renewalCurrency = "EUR"
        renewal.renewalBillingPlanType = "MONTHLY_COMMITMENT_12"
        let d = decide(
            [
                transaction(otid, purchased: -40, token: nil, appTransactionId: "704"),
                transaction("2", purchased: -10, token: token, appTransactionId: "705"),
            ],
            renewal: renewal
        )
        #expect(d.customer.appAccountToken == token)
        #expect(d.customer.appTransactionId == "705")
        #expect(d.customer.priceIncreaseStatus == 0)
        #expect(d.customer.renewalPriceMilliunits == 12_990)
        #expect(d.customer.renewalCurrency == "EUR")
        #expect(d.customer.renewalBillingPlanType == "MONTHLY_COMMITMENT_12")
    }

    @Test func theRenewalInfosIdsWinAndNoRenewalPriceMeansNoCurrency() {
        var renewal = PendingRenewalInfo(originalTransactionId: otid, autoRenewStatus: false)
        renewal.appAccountToken = token
        renewal.appTransactionId = "900"
        renewal.renewalCurrency = "EUR"  // Apple's currency of a renewal price it did not send: nothing to price
        let d = decide([transaction(otid, purchased: -10, token: nil, appTransactionId: "705")], renewal: renewal)
        #expect(d.customer.appAccountToken == token)
        #expect(d.customer.appTransactionId == "900")
        #expect(d.customer.renewalPriceMilliunits == nil)
        #expect(d.customer.renewalCurrency == nil)
        #expect(d.customer.priceIncreaseStatus == nil)
    }

    @Test func anImplausibleRenewalPriceIsOutOfBounds() {
        var renewal = PendingRenewalInfo(originalTransactionId: otid)
        renewal.renewalPriceMilliunits = -1
        #expect(ValueBounds.problem(in: renewal)?.contains("renewalPrice -1") == true)
        renewal.renewalPriceMilliunits = 4990
        renewal.appAccountToken = String(repeating: "x", count: 5000)
        #expect(ValueBounds.problem(in: renewal)?.contains("appAccountToken") == true)
    }
}
