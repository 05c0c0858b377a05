import Foundation
import ReceiptDomain
import Testing

/// The App Store Server API's evidence goes through the same rules as a verifyReceipt answer, and Apple's
/// status decides the state within the precedence of docs/decision-rules.md ("Precedence").
@Suite struct SignedEvidenceDecisionTests {
    let now = Date(timeIntervalSince1970: 1_795_000_000)
    let otid = "2000000000000001"

    func transaction(
        _ id: String,
        purchased days: Double,
        expires: Double,
        refunded: Double? = nil
    ) -> ReceiptTransaction {
        var t = ReceiptTransaction(
            transactionId: id,
            originalTransactionId: otid,
            productId: "pro.monthly",
            purchaseDate: now.addingTimeInterval(days * 86_400),
            expiresDate: now.addingTimeInterval(expires * 86_400),
            cancellationDate: refunded.map { now.addingTimeInterval($0 * 86_400) }
        )
        t.signedFacts = SignedTransactionFacts(priceMilliunits: 9990, currency: "USD", storefront: "USA")
        return t
    }

    func evidence(
        _ transactions: [ReceiptTransaction],
        status: Int?,
        autoRenew: Bool = true
    ) -> SubscriptionEvidence {
        SubscriptionEvidence(
            status: status,
            environment: .production,
            bundleId: "com.example.app",
            transactions: transactions,
            renewalInfo: [PendingRenewalInfo(originalTransactionId: otid, autoRenewStatus: autoRenew)],
            signedTransactionInfo: "jws.t",
            signedRenewalInfo: "jws.r"
        )
    }

    var stored: StoredSubscription {
        StoredSubscription(originalTransactionId: otid, userId: "u", productId: "pro.monthly", expiresAt: now)
    }

    @Test func activeStatusDecidesLikeVerifyReceiptAndKeepsThePrices() {
        let d = DecisionEngine.decide(
            stored: stored,
            evidence: evidence(
                [transaction(otid, purchased: -40, expires: -10), transaction("2", purchased: -10, expires: 20)],
                status: 1
            ),
            now: now,
            bundleId: "com.example.app"
        )
        #expect(d.state == .active)
        #expect(d.outcome == .renewed)
        #expect(d.latestTransactionId == "2")
        #expect(d.ledger.count == 2)
        #expect(d.ledger.last?.signedFacts?.priceMilliunits == 9990)
        #expect(d.signedTransactionInfo == "jws.t")
        #expect(d.signedRenewalInfo == "jws.r")
    }

    @Test func midPeriodRefundRevokesWhateverTheExpiry() {
        let d = DecisionEngine.decide(
            stored: StoredSubscription(
                originalTransactionId: otid,
                userId: "u",
                productId: "pro.monthly",
                expiresAt: now.addingTimeInterval(300 * 86_400),
                state: .active
            ),
            evidence: evidence([transaction(otid, purchased: -60, expires: 305, refunded: -2)], status: 5),
            now: now,
            bundleId: "com.example.app"
        )
        #expect(d.state == .revoked)
        #expect(d.outcome == .revoked)
        #expect(d.revokedAt != nil)
        #expect(d.expiryMovedBackwards)
    }

    @Test func appleStatusWinsOverTheDatesAndTheNoteSaysSo() {
        // Apple still retries billing (status 3) although the period has ended and no grace period is known.
        let d = DecisionEngine.decide(
            stored: stored,
            evidence: evidence([transaction(otid, purchased: -40, expires: -10)], status: 3),
            now: now,
            bundleId: "com.example.app"
        )
        #expect(d.state == .billingRetry)
        #expect(d.notes.contains { $0.contains("status 3") }, "\(d.notes)")
    }

    /// Signed over unsigned (docs/decision-rules.md, "Precedence"): the status field is not signed, so status 1
    /// does not take back a refund a verified transaction carries; an unsigned refund (a ledger row from
    /// verifyReceipt) gives way to it.
    @Test func theUnsignedStatusNeverTakesBackASignedRevocation() {
        let refunded = transaction(otid, purchased: -60, expires: 305, refunded: -2)
        let signed = DecisionEngine.decide(
            stored: stored,
            evidence: evidence([refunded], status: 1),
            now: now,
            bundleId: "com.example.app"
        )
        #expect(signed.state == .revoked)
        #expect(signed.revokedAt == refunded.cancellationDate)
        #expect(signed.notes.contains { $0.contains("not signed") }, "\(signed.notes)")
        var unsignedRefund = refunded
        unsignedRefund.signedFacts = nil
        let unsigned = DecisionEngine.decide(
            stored: stored,
            evidence: evidence([unsignedRefund], status: 1),
            now: now,
            bundleId: "com.example.app"
        )
        #expect(unsigned.state == .active)
        #expect(unsigned.revokedAt == nil)
    }

    @Test func anotherAppsPayloadIsRejected() {
        var e = evidence([transaction(otid, purchased: -10, expires: 20)], status: 1)
        e.bundleId = "com.other.app"
        let d = DecisionEngine.decide(stored: stored, evidence: e, now: now, bundleId: "com.example.app")
        #expect(d.outcome == .rejected)
        #expect(d.rejectReason?.code == .bundleMismatch)
    }

    @Test func autoRenewChangeMidPeriodIsAChange() {
        let d = DecisionEngine.decide(
            stored: StoredSubscription(
                originalTransactionId: otid,
                userId: "u",
                productId: "pro.monthly",
                expiresAt: now.addingTimeInterval(200 * 86_400),
                state: .active,
                autoRenew: true,
                latestTransactionId: otid
            ),
            evidence: evidence([transaction(otid, purchased: -165, expires: 200)], status: 1, autoRenew: false),
            now: now,
            bundleId: "com.example.app"
        )
        #expect(d.outcome == .changed)
        #expect(d.autoRenew == false)
    }

    @Test func boundsNameTheFieldOfAnImplausibleSignedValue() {
        var t = transaction(otid, purchased: -10, expires: 20)
        #expect(ValueBounds.problem(in: t) == nil)
        t.expiresDate = Date(timeIntervalSince1970: 9_000_000_000_000)
        #expect(ValueBounds.problem(in: t)?.contains("expiresDate") ?? false)
        t = transaction(otid, purchased: -10, expires: 20)
        t.productId = "pro\u{0}monthly"
        #expect(ValueBounds.problem(in: t)?.contains("NUL") ?? false)
        t = transaction(otid, purchased: -10, expires: 20)
        t.signedFacts?.revocationPercentage = 100_001
        #expect(ValueBounds.problem(in: t)?.contains("revocationPercentage") ?? false)
        #expect(
            ValueBounds.problem(in: PendingRenewalInfo(expirationIntent: Int(Int32.max) + 1))?.contains(
                "expirationIntent"
            )
                ?? false
        )
    }
}
