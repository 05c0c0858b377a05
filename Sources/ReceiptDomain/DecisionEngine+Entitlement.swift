import Foundation

extension DecisionEngine {
    /// What a subscription's transactions alone entitle (docs/decision-rules.md, section 2): the remaining
    /// transactions (neither refunded nor upgraded) give the expiry; the latest-expiring refund revokes only when
    /// it, not a remaining transaction, held the entitlement.
    struct Entitlement {
        var expiresAt: Date
        /// The transaction the product, offer flags and latest transaction id come from.
        var source: ReceiptTransaction
        var isRevoked: Bool
        var revokedAt: Date?
        var cancellationReason: Int?
        /// Every transaction was replaced by an upgrade whose upgraded-to transaction is not in the answer.
        var upgradedAway: Bool
        var topRefund: ReceiptTransaction?
        var upgraded: [ReceiptTransaction]
        var notes: [String]
    }

    /// The entitlement of `transactions` (one subscription's, deduplicated and in purchase order) at `now`; nil when
    /// no transaction gives one (not a subscription).
    static func entitlement(of transactions: [ReceiptTransaction], now: Date) -> Entitlement? {
        let remaining = transactions.filter { !$0.isRefunded && !$0.isUpgraded && $0.expiresDate != nil }
        let upgraded = transactions.filter { $0.isUpgraded && $0.expiresDate != nil }
        let refunds = transactions.filter { $0.isRefunded && $0.expiresDate != nil }
        let best = remaining.max { isEarlier($0, $1, by: { $0.expiresDate }) }
        let topRefund = refunds.max { isEarlier($0, $1, by: { $0.expiresDate }) }
        var isRevoked = false
        if let topRefund, let refundExpiry = topRefund.expiresDate {
            if let bestExpiry = best?.expiresDate {
                isRevoked = refundExpiry > bestExpiry && bestExpiry <= now
            } else {
                isRevoked = true
            }
        }
        var entitlement: Entitlement
        if let best, let bestExpiry = best.expiresDate {
            entitlement = Entitlement(
                expiresAt: bestExpiry,
                source: best,
                isRevoked: isRevoked,
                upgradedAway: false,
                topRefund: topRefund,
                upgraded: upgraded,
                notes: []
            )
        } else if isRevoked, let topRefund {
            // Everything was refunded (or upgraded away): the entitlement ended at the latest refund.
            let lastRefund = refunds.max { isEarlier($0, $1, by: { $0.cancellationDate }) } ?? topRefund
            entitlement = Entitlement(
                expiresAt: lastRefund.cancellationDate ?? topRefund.cancellationDate ?? now,
                source: lastRefund,
                isRevoked: true,
                upgradedAway: false,
                topRefund: topRefund,
                upgraded: upgraded,
                notes: []
            )
        } else if let lastUpgraded = upgraded.max(by: {
            isEarlier($0, $1, by: { upgradeEnd($0, in: transactions, now: now) })
        }) {
            // Only replaced transactions and no upgraded-to one in the answer: nothing entitles after the upgrade.
            entitlement = Entitlement(
                expiresAt: upgradeEnd(lastUpgraded, in: transactions, now: now) ?? now,
                source: lastUpgraded,
                isRevoked: isRevoked,
                upgradedAway: true,
                topRefund: topRefund,
                upgraded: upgraded,
                notes: [
                    "every transaction of this subscription was replaced by an upgrade and the upgraded-to transaction "
                        + "is not in the answer: no entitlement after the upgrade"
                ]
            )
        } else {
            return nil
        }
        if isRevoked, let topRefund {
            entitlement.revokedAt = topRefund.cancellationDate
            entitlement.cancellationReason = topRefund.cancellationReason
        }
        return entitlement
    }

    /// Total order by a date key, then purchase date, then transaction id (deterministic on ties).
    static func isEarlier(
        _ a: ReceiptTransaction,
        _ b: ReceiptTransaction,
        by key: (ReceiptTransaction) -> Date?
    ) -> Bool {
        let (ka, kb) = (key(a) ?? .distantPast, key(b) ?? .distantPast)
        if ka != kb { return ka < kb }
        let (pa, pb) = (a.purchaseDate ?? .distantPast, b.purchaseDate ?? .distantPast)
        if pa != pb { return pa < pb }
        return a.transactionId < b.transactionId
    }
}
