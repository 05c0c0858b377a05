import Foundation
import ReceiptDomain

/// The events of one decided change (docs/events.md, "When an event is written"): the stored row before, the
/// decision after. Pure: the run's writer calls it for each row it updates, in the transaction that updates it.
///
/// A row never verified before (no stored state) is the reconciler's baseline, no event: a first deployment would
/// otherwise announce every subscription of the app. Otherwise one event per transition, in this order: a reversed
/// refund (no longer revoked, same transaction: a new one after a refund is a purchase); a purchase, renewal or extension (or a recovery, below); a product change; the state's change (grace
/// period, billing issue, recovery, expiration, refund or revocation); auto-renew turned off or on; a price
/// increase accepted.
public struct SubscriptionTransitions: Sendable {
    public var before: StoredSubscription
    /// The stored `price_increase_status` (not in `StoredSubscription`: the engine does not compare it).
    public var beforePriceIncreaseStatus: Int?
    public var after: Decision

    public init(before: StoredSubscription, beforePriceIncreaseStatus: Int?, after: Decision) {
        self.before = before
        self.beforePriceIncreaseStatus = beforePriceIncreaseStatus
        self.after = after
    }

    /// The snapshot of the stored row and of the row as the decision writes it (a decision without an expiry keeps
    /// the stored one, as the write does).
    public var snapshots: (before: SubscriptionSnapshot, after: SubscriptionSnapshot) {
        (
            SubscriptionSnapshot(
                state: before.state,
                expiresAt: before.expiresAt,
                productId: before.productId,
                autoRenew: before.autoRenew
            ),
            SubscriptionSnapshot(
                state: after.state,
                expiresAt: after.expiresAt ?? before.expiresAt,
                productId: after.productId,
                autoRenew: after.autoRenew
            )
        )
    }

    public var events: [SubscriptionEventDraft] {
        guard let was = before.state, let now = after.state else { return [] }
        let newTransaction = after.latestTransactionId != nil && after.latestTransactionId != before.latestTransactionId
        var events: [SubscriptionEventDraft] = []
        if was == .revoked, now != .revoked, !newTransaction {
            events.append(SubscriptionEventDraft(.refundReversed))
        }
        events += charge(was: was, now: now, newTransaction: newTransaction)
        if !before.productId.isEmpty, after.productId != before.productId {
            events.append(withTransaction(.productChange))
        }
        events += stateChange(was: was, now: now)
        switch (before.autoRenew, after.autoRenew) {
        case (true, false): events.append(SubscriptionEventDraft(.autoRenewOff))
        case (false, true): events.append(SubscriptionEventDraft(.autoRenewOn))
        default: break
        }
        if beforePriceIncreaseStatus == 0, after.customer.priceIncreaseStatus == 1 {
            events.append(SubscriptionEventDraft(.priceIncreaseConsent))
        }
        return events
    }

    /// A new charge or a later expiry while entitled after the change: a purchase after an expiry or revocation, a
    /// renewal of an active subscription, an extension without a new transaction. A charge after a billing issue is
    /// the recovery (`stateChange`).
    func charge(was: SubscriptionState, now: SubscriptionState, newTransaction: Bool) -> [SubscriptionEventDraft] {
        guard now.isEntitled else { return [] }
        let later = (after.expiresAt ?? before.expiresAt).map { new in before.expiresAt.map { new > $0 } ?? true }
        switch was {
        case .expired, .revoked:
            return newTransaction
                ? [withTransaction(.purchase)] : later == true ? [SubscriptionEventDraft(.extension)] : []
        case .active:
            guard later == true else { return [] }
            return [newTransaction ? withTransaction(.renewal) : SubscriptionEventDraft(.extension)]
        case .gracePeriod, .billingRetry:
            return []
        }
    }

    /// The state's own change: into the grace period or billing retry, back from them, expired, revoked.
    func stateChange(was: SubscriptionState, now: SubscriptionState) -> [SubscriptionEventDraft] {
        guard was != now else { return [] }
        switch now {
        case .gracePeriod where was == .active:
            return [SubscriptionEventDraft(.gracePeriod, occurredAt: before.expiresAt)]
        case .billingRetry where was == .active || was == .gracePeriod:
            return [SubscriptionEventDraft(.billingIssue, occurredAt: before.expiresAt)]
        case .active where was == .gracePeriod || was == .billingRetry:
            return [withTransaction(.recovery)]
        case .expired where was != .revoked:
            return [
                SubscriptionEventDraft(
                    .expiration,
                    reason: Self.expirationReason(after.expirationIntent),
                    occurredAt: after.expiresAt ?? before.expiresAt
                )
            ]
        case .revoked:
            let kind: SubscriptionEventKind = after.cancellationReason == nil ? .revocation : .refund
            let reason = after.cancellationReason.map { $0 == 1 ? "issue_in_app" : "other" }
            return [withTransaction(kind, reason: reason, occurredAt: after.revokedAt)]
        default:
            return []
        }
    }

    /// An event naming the decision's latest transaction, with its price, currency and purchase date from the
    /// decision's ledger when it holds them.
    func withTransaction(
        _ kind: SubscriptionEventKind,
        reason: String? = nil,
        occurredAt: Date? = nil
    ) -> SubscriptionEventDraft {
        let id = after.latestTransactionId
        let entry = id.flatMap { id in after.ledger.last { $0.transactionId == id } }
        return SubscriptionEventDraft(
            kind,
            reason: reason,
            transactionId: id,
            priceMilliunits: entry?.signedFacts?.priceMilliunits,
            currency: entry?.signedFacts?.currency,
            occurredAt: occurredAt ?? entry?.purchaseDate
        )
    }

    /// Apple's expiration intent as docs/events.md names it: 1 voluntary, 2 billing_error, 3 price_increase,
    /// 4 product_unavailable, 5 other; nil when Apple gave none.
    static func expirationReason(_ intent: Int?) -> String? {
        switch intent {
        case 1: "voluntary"
        case 2: "billing_error"
        case 3: "price_increase"
        case 4: "product_unavailable"
        case .some: "other"
        case nil: nil
        }
    }
}
