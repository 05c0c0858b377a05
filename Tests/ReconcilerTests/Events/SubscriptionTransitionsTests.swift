import Foundation
import ReceiptDomain
import Testing

@testable import Reconciler

/// The events of one change (docs/events.md, "When an event is written"), from the stored row before and the
/// decision after: one per transition, in the documented order, none for a first verification or no change.
@Suite struct SubscriptionTransitionsTests {
    static let t0 = Date(timeIntervalSince1970: 1_790_000_000)
    static let day: TimeInterval = 86_400

    static func stored(
        _ state: SubscriptionState?,
        expires: Date? = t0,
        product: String = "monthly",
        autoRenew: Bool? = true,
        transaction: String? = "1001"
    ) -> StoredSubscription {
        StoredSubscription(
            originalTransactionId: "1000",
            userId: "u1",
            productId: product,
            expiresAt: expires,
            state: state,
            autoRenew: autoRenew,
            latestTransactionId: transaction
        )
    }

    static func decision(
        _ state: SubscriptionState,
        expires: Date? = t0,
        product: String = "monthly",
        autoRenew: Bool? = true,
        transaction: String? = "1001",
        intent: Int? = nil,
        revokedAt: Date? = nil,
        cancellationReason: Int? = nil,
        ledger: [LedgerEntry] = []
    ) -> Decision {
        Decision(
            outcome: .changed,
            originalTransactionId: "1000",
            state: state,
            expiresAt: expires,
            productId: product,
            autoRenew: autoRenew,
            autoRenewProductId: nil,
            expirationIntent: intent,
            gracePeriodExpiresAt: nil,
            inBillingRetry: state == .billingRetry,
            isTrial: false,
            isIntroOffer: false,
            latestTransactionId: transaction,
            revokedAt: revokedAt,
            cancellationReason: cancellationReason,
            environment: .production,
            subscriptionGroupIdentifier: nil,
            latestReceipt: nil,
            ledger: ledger,
            expiryMovedBackwards: false,
            expiryMovedBackwardsReason: nil,
            rejectReason: nil,
            notes: []
        )
    }

    static func kinds(_ before: StoredSubscription, _ after: Decision, priceStatus: Int? = nil) -> [String] {
        SubscriptionTransitions(before: before, beforePriceIncreaseStatus: priceStatus, after: after).events.map(
            \.kind.rawValue
        )
    }

    @Test func aFirstVerificationOrNoChangeWritesNothing() {
        #expect(Self.kinds(Self.stored(nil), Self.decision(.expired, intent: 1)).isEmpty)
        #expect(Self.kinds(Self.stored(.active), Self.decision(.active)).isEmpty)
        #expect(Self.kinds(Self.stored(.expired), Self.decision(.expired)).isEmpty)
    }

    @Test func aNewPeriodIsARenewalWithItsTransactionPriceAndDate() {
        var entry = LedgerEntry(
            transactionId: "1002",
            originalTransactionId: "1000",
            productId: "monthly",
            purchaseDate: Self.t0,
            expiresDate: Self.t0 + 30 * Self.day,
            kind: .renewal,
            replacedByUpgrade: false,
            isTrial: false,
            isIntroOffer: false,
            offer: nil,
            cancellationDate: nil,
            cancellationReason: nil,
            webOrderLineItemId: nil,
            subscriptionGroupIdentifier: nil,
            ownershipType: nil
        )
        entry.signedFacts = SignedTransactionFacts(priceMilliunits: 9990, currency: "USD")
        let after = Self.decision(.active, expires: Self.t0 + 30 * Self.day, transaction: "1002", ledger: [entry])
        let events = SubscriptionTransitions(before: Self.stored(.active), beforePriceIncreaseStatus: nil, after: after)
            .events
        #expect(events.map(\.kind) == [.renewal])
        #expect(events.first?.transactionId == "1002" && events.first?.priceMilliunits == 9990)
        #expect(events.first?.currency == "USD" && events.first?.occurredAt == Self.t0)
        // The same transaction with a later expiry: a renewal-date extension.
        #expect(Self.kinds(Self.stored(.active), Self.decision(.active, expires: Self.t0 + Self.day)) == ["extension"])
    }

    @Test func billingProblemsAndTheirRecovery() {
        #expect(Self.kinds(Self.stored(.active), Self.decision(.billingRetry)) == ["billing_issue"])
        #expect(Self.kinds(Self.stored(.active), Self.decision(.gracePeriod)) == ["grace_period"])
        #expect(Self.kinds(Self.stored(.gracePeriod), Self.decision(.billingRetry)) == ["billing_issue"])
        let renewed = Self.decision(.active, expires: Self.t0 + 30 * Self.day, transaction: "1002")
        #expect(Self.kinds(Self.stored(.billingRetry), renewed) == ["recovery"])
        #expect(Self.kinds(Self.stored(.gracePeriod), renewed) == ["recovery"])
    }

    @Test func anExpirationSaysWhyAndAutoRenewOffIsItsOwnEvent() {
        let lapsed = SubscriptionTransitions(
            before: Self.stored(.active),
            beforePriceIncreaseStatus: nil,
            after: Self.decision(.expired, autoRenew: false, intent: 1)
        )
        #expect(lapsed.events.map(\.kind) == [.expiration, .autoRenewOff])
        #expect(lapsed.events.first?.reason == "voluntary" && lapsed.events.first?.occurredAt == Self.t0)
        #expect(Self.kinds(Self.stored(.billingRetry), Self.decision(.expired, intent: 2)) == ["expiration"])
        #expect(Self.kinds(Self.stored(.active, autoRenew: false), Self.decision(.active)) == ["auto_renew_on"])
    }

    @Test func refundsRevocationsAndReversals() {
        let refunded = SubscriptionTransitions(
            before: Self.stored(.active),
            beforePriceIncreaseStatus: nil,
            after: Self.decision(.revoked, revokedAt: Self.t0 - Self.day, cancellationReason: 1)
        )
        #expect(refunded.events.map(\.kind) == [.refund])
        #expect(
            refunded.events.first?.reason == "issue_in_app" && refunded.events.first?.occurredAt == Self.t0 - Self.day
        )
        #expect(Self.kinds(Self.stored(.active), Self.decision(.revoked, revokedAt: Self.t0)) == ["revocation"])
        #expect(Self.kinds(Self.stored(.revoked), Self.decision(.active)) == ["refund_reversed"])
        // Bought again after the refund: a purchase, not a reversal.
        let again = Self.decision(.active, expires: Self.t0 + 30 * Self.day, transaction: "3001")
        #expect(Self.kinds(Self.stored(.revoked), again) == ["purchase"])
    }

    @Test func aPurchaseAfterALapseAndAProductChange() {
        let back = Self.decision(.active, expires: Self.t0 + 40 * Self.day, product: "yearly", transaction: "2001")
        #expect(
            Self.kinds(Self.stored(.expired, expires: Self.t0 - 60 * Self.day), back) == ["purchase", "product_change"]
        )
        let upgraded = Self.decision(.active, expires: Self.t0 + Self.day, product: "yearly", transaction: "1002")
        #expect(Self.kinds(Self.stored(.active), upgraded) == ["renewal", "product_change"])
    }

    @Test func aPriceIncreaseAcceptedOnceItWasPending() {
        var after = Self.decision(.active)
        after.customer.priceIncreaseStatus = 1
        #expect(Self.kinds(Self.stored(.active), after, priceStatus: 0) == ["price_increase_consent"])
        #expect(Self.kinds(Self.stored(.active), after, priceStatus: 1).isEmpty)
        #expect(Self.kinds(Self.stored(.active), after, priceStatus: nil).isEmpty)
    }

    @Test func snapshotsAreJSONWithTheDecisionsValuesAndTheStoredExpiryWhenItHasNone() throws {
        let transitions = SubscriptionTransitions(
            before: Self.stored(.active, product: "a \"quoted\" id"),
            beforePriceIncreaseStatus: nil,
            after: Self.decision(.expired, expires: nil, autoRenew: nil)
        )
        let (before, after) = transitions.snapshots
        let b = try JSONSerialization.jsonObject(with: Data(before.json.utf8)) as? [String: Any]
        let a = try JSONSerialization.jsonObject(with: Data(after.json.utf8)) as? [String: Any]
        #expect(b?["product_id"] as? String == "a \"quoted\" id" && b?["auto_renew"] as? Bool == true)
        #expect(a?["state"] as? String == "expired" && a?["auto_renew"] is NSNull)
        #expect(a?["expires_at"] as? String == b?["expires_at"] as? String && a?["expires_at"] != nil)
    }
}
