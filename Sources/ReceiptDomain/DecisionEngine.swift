import Foundation

/// Decides a subscription's new row values from a verifyReceipt response: a pure function of
/// (stored row, response, now, configured bundle id).
///
/// Rules (docs/apple-receipts.md §1 "Deciding a subscription's state"), with this project's choices:
/// - only the `_ms` dates are used; arrays may be in any order; `pending_renewal_info` is matched by
///   `original_transaction_id`, never by index;
/// - transactions come from `latest_receipt_info`, or `receipt.in_app` when that is absent or empty;
/// - a transaction with a cancellation and **not** `is_upgraded` is a refund and counts as never
///   purchased; an `is_upgraded` transaction is not a refund, but its entitlement ends at its
///   cancellation (upgrade) time: its effective expiry is `min(expires, cancellation)`;
/// - expiry = the latest effective expiry over non-refunded transactions; product and latest
///   transaction id come from that transaction;
/// - `revoked` iff a refunded transaction expires strictly later than every non-refunded one; then
///   `expires_at` = the latest non-refunded effective expiry, or (all refunded) the latest refund's
///   cancellation time, and `revoked_at` = the cancellation time of the latest-expiring refund;
/// - otherwise, at `now`: active iff expiry > now; grace iff expiry <= now < grace expiry;
///   billing_retry iff `is_in_billing_retry_period`; else expired;
/// - the expiry never moves backwards except through revocation (then `expiryMovedBackwards` says so);
///   when Apple's expiry is earlier without a refund, the stored expiry and product are kept (noted);
/// - bundle id mismatch, subscription absent, non-0/21006 status or no expiry: `.rejected`, nothing extended.
public enum DecisionEngine {
    public static func decide(
        stored: StoredSubscription,
        response: VerifyReceiptResponse,
        now: Date,
        bundleId: String?
    ) -> Decision {
        let otid = stored.originalTransactionId

        // 1. Only status 0 / 21006 carry a decidable receipt.
        if response.status != 0 && response.status != 21006 {
            let reason: VerdictReason
            switch VerifyClassifier.classify(response: response, requestedEnvironment: nil) {
            case .switchEnvironment(let target):
                reason = VerdictReason(
                    target == .sandbox ? .sandboxReceiptInProduction : .productionReceiptInSandbox,
                    appleStatus: response.status)
            case let verdict:
                reason = verdict.reason ?? VerdictReason(.unknownStatus, appleStatus: response.status)
            }
            return rejected(stored, reason)
        }

        // 2. Foreign receipts never extend anything.
        if let expected = bundleId ?? stored.bundleId {
            guard let actual = response.receipt?.bundleId else {
                return rejected(stored, VerdictReason(.bundleMismatch, detail: "receipt has no bundle_id, expected \(expected)"))
            }
            if actual != expected {
                return rejected(stored, VerdictReason(.bundleMismatch, detail: "receipt is for \(actual), expected \(expected)"))
            }
        }

        // 3. This subscription's transactions, deduplicated and in purchase order.
        let transactions = ordered(response.subscriptionTransactions.filter { $0.originalTransactionId == otid })
        if transactions.isEmpty {
            return rejected(stored, VerdictReason(.subscriptionNotInReceipt, detail: "original_transaction_id \(otid)"))
        }
        if transactions.allSatisfy({ $0.expiresDate == nil }) {
            return rejected(stored, VerdictReason(.notASubscription, detail: "original_transaction_id \(otid)"))
        }
        let ledger = makeLedger(transactions, originalTransactionId: otid)

        // 4. Entitlement expiry over non-refunded transactions; the latest-expiring refund.
        let unrefunded = transactions.filter { !$0.isRefunded && $0.expiresDate != nil }
        let best = unrefunded.max { isEarlier($0, $1, by: effectiveExpiry) }
        let bestExpiry = best.flatMap(effectiveExpiry)
        let refunds = transactions.filter { $0.isRefunded && $0.expiresDate != nil }
        let topRefund = refunds.max { isEarlier($0, $1, by: { $0.expiresDate }) }
        var isRevoked = false
        if let topRefund, let refundExpiry = topRefund.expiresDate {
            isRevoked = bestExpiry.map { refundExpiry > $0 } ?? true
        }

        var notes: [String] = []
        var expiresAt: Date
        var source: ReceiptTransaction
        var productId: String
        var latestTransactionId: String?
        var revokedAt: Date?
        var cancellationReason: Int?
        var movedBackwards = false
        var movedBackwardsReason: String?

        if isRevoked, let topRefund {
            if let best, let bestExpiry {
                source = best
                expiresAt = bestExpiry
            } else {
                // Everything was refunded: the entitlement ended at the latest refund.
                let lastRefund =
                    refunds.max { isEarlier($0, $1, by: { $0.cancellationDate }) } ?? topRefund
                source = lastRefund
                expiresAt = lastRefund.cancellationDate ?? topRefund.cancellationDate ?? now
            }
            productId = source.productId
            latestTransactionId = source.transactionId
            revokedAt = topRefund.cancellationDate
            cancellationReason = topRefund.cancellationReason
            if let storedExpiry = stored.expiresAt, expiresAt < storedExpiry {
                movedBackwards = true
                movedBackwardsReason =
                    "transaction \(topRefund.transactionId) was refunded/revoked"
                    + (revokedAt.map { " at " + CivilDate.rfc3339($0) } ?? "")
                    + ": expiry moves back from \(CivilDate.rfc3339(storedExpiry)) to \(CivilDate.rfc3339(expiresAt))"
            }
        } else {
            // Not revoked implies a non-refunded transaction with an expiry exists.
            guard let best, let bestExpiry else {
                return rejected(stored, VerdictReason(.notASubscription, detail: "original_transaction_id \(otid)"))
            }
            source = best
            expiresAt = bestExpiry
            productId = best.productId
            latestTransactionId = best.transactionId
            if let storedExpiry = stored.expiresAt, bestExpiry < storedExpiry {
                notes.append(
                    "Apple's expiry \(CivilDate.rfc3339(bestExpiry)) is earlier than the stored "
                        + "\(CivilDate.rfc3339(storedExpiry)) and nothing was refunded: kept the stored expiry")
                expiresAt = storedExpiry
                productId = stored.productId
                latestTransactionId = stored.latestTransactionId ?? best.transactionId
            }
        }

        // 5. Renewal info, matched by original_transaction_id.
        let pending = response.pendingRenewalInfo.first { $0.originalTransactionId == otid }
        let autoRenew: Bool?
        let autoRenewProductId: String?
        let expirationIntent: Int?
        if let pending {
            autoRenew = pending.autoRenewStatus
            autoRenewProductId = pending.autoRenewProductId
            expirationIntent = pending.expirationIntent
        } else {
            notes.append("no pending_renewal_info for this subscription: auto-renew fields kept from the stored row")
            autoRenew = stored.autoRenew
            autoRenewProductId = stored.autoRenewProductId
            expirationIntent = stored.expirationIntent
        }
        let graceExpiry = pending?.gracePeriodExpiresDate
        let inBillingRetry = pending?.isInBillingRetryPeriod ?? false

        // 6. State at `now`.
        let state: SubscriptionState
        if isRevoked {
            state = .revoked
        } else if expiresAt > now {
            state = .active
        } else if let graceExpiry, now < graceExpiry {
            state = .gracePeriod
        } else if inBillingRetry {
            state = .billingRetry
        } else {
            state = .expired
        }

        var decision = Decision(
            outcome: .unchanged,
            originalTransactionId: otid,
            state: state,
            expiresAt: expiresAt,
            productId: productId,
            autoRenew: autoRenew,
            autoRenewProductId: autoRenewProductId,
            expirationIntent: expirationIntent,
            gracePeriodExpiresAt: graceExpiry,
            inBillingRetry: inBillingRetry,
            isTrial: source.isTrialPeriod,
            isIntroOffer: source.isInIntroOfferPeriod,
            latestTransactionId: latestTransactionId,
            revokedAt: revokedAt,
            cancellationReason: cancellationReason,
            environment: response.environment ?? stored.environment,
            subscriptionGroupIdentifier: source.subscriptionGroupIdentifier
                ?? transactions.lazy.compactMap(\.subscriptionGroupIdentifier).first,
            latestReceipt: response.latestReceipt,
            ledger: ledger,
            expiryMovedBackwards: movedBackwards,
            expiryMovedBackwardsReason: movedBackwardsReason,
            rejectReason: nil,
            notes: notes
        )
        decision.outcome = outcome(of: decision, comparedWith: stored)
        return decision
    }

    // MARK: - Pieces

    /// When a transaction's entitlement ends: its expiry, or its upgrade time when it was upgraded earlier.
    static func effectiveExpiry(_ transaction: ReceiptTransaction) -> Date? {
        guard let expires = transaction.expiresDate else { return nil }
        if transaction.isUpgraded, let upgradedAt = transaction.cancellationDate {
            return min(expires, upgradedAt)
        }
        return expires
    }

    /// Total order by a date key, then purchase date, then transaction id (deterministic on ties).
    private static func isEarlier(
        _ a: ReceiptTransaction, _ b: ReceiptTransaction, by key: (ReceiptTransaction) -> Date?
    ) -> Bool {
        let (ka, kb) = (key(a) ?? .distantPast, key(b) ?? .distantPast)
        if ka != kb { return ka < kb }
        let (pa, pb) = (a.purchaseDate ?? .distantPast, b.purchaseDate ?? .distantPast)
        if pa != pb { return pa < pb }
        return a.transactionId < b.transactionId
    }

    /// Deduplicates by transaction id (keeping the most informative copy) and sorts by purchase date.
    static func ordered(_ transactions: [ReceiptTransaction]) -> [ReceiptTransaction] {
        var byId: [String: ReceiptTransaction] = [:]
        for transaction in transactions {
            if let existing = byId[transaction.transactionId] {
                let prefersNew =
                    (existing.cancellationDate == nil && transaction.cancellationDate != nil)
                    || (existing.cancellationDate == nil) == (transaction.cancellationDate == nil)
                        && (transaction.expiresDate ?? .distantPast) > (existing.expiresDate ?? .distantPast)
                if prefersNew { byId[transaction.transactionId] = transaction }
            } else {
                byId[transaction.transactionId] = transaction
            }
        }
        return byId.values.sorted { isEarlier($0, $1, by: { $0.purchaseDate }) }
    }

    static func makeLedger(_ ordered: [ReceiptTransaction], originalTransactionId: String) -> [LedgerEntry] {
        let hasInitial = ordered.contains { $0.transactionId == originalTransactionId }
        var entries: [LedgerEntry] = []
        entries.reserveCapacity(ordered.count)
        for (index, transaction) in ordered.enumerated() {
            let kind: LedgerEntry.Kind
            if transaction.isRefunded {
                kind = .refund
            } else if index > 0, ordered[index - 1].isUpgraded {
                kind = .upgrade
            } else if transaction.transactionId == originalTransactionId || (!hasInitial && index == 0) {
                kind = .initial
            } else {
                kind = .renewal
            }
            entries.append(
                LedgerEntry(
                    transactionId: transaction.transactionId,
                    originalTransactionId: transaction.originalTransactionId,
                    productId: transaction.productId,
                    purchaseDate: transaction.purchaseDate,
                    expiresDate: transaction.expiresDate,
                    kind: kind,
                    replacedByUpgrade: transaction.isUpgraded,
                    isTrial: transaction.isTrialPeriod,
                    isIntroOffer: transaction.isInIntroOfferPeriod,
                    offer: transaction.offerCodeRefName ?? transaction.promotionalOfferId,
                    cancellationDate: transaction.cancellationDate,
                    cancellationReason: transaction.cancellationReason,
                    webOrderLineItemId: transaction.webOrderLineItemId,
                    subscriptionGroupIdentifier: transaction.subscriptionGroupIdentifier,
                    ownershipType: transaction.inAppOwnershipType
                ))
        }
        return entries
    }

    /// A rejected decision: stored values, no state, nothing extended, no receipt to store.
    static func rejected(_ stored: StoredSubscription, _ reason: VerdictReason) -> Decision {
        Decision(
            outcome: .rejected,
            originalTransactionId: stored.originalTransactionId,
            state: nil,
            expiresAt: stored.expiresAt,
            productId: stored.productId,
            autoRenew: stored.autoRenew,
            autoRenewProductId: stored.autoRenewProductId,
            expirationIntent: stored.expirationIntent,
            gracePeriodExpiresAt: stored.gracePeriodExpiresAt,
            inBillingRetry: stored.inBillingRetry ?? false,
            isTrial: false,
            isIntroOffer: false,
            latestTransactionId: stored.latestTransactionId,
            revokedAt: stored.revokedAt,
            cancellationReason: nil,
            environment: stored.environment,
            subscriptionGroupIdentifier: nil,
            latestReceipt: nil,
            ledger: [],
            expiryMovedBackwards: false,
            expiryMovedBackwardsReason: nil,
            rejectReason: reason,
            notes: []
        )
    }

    /// Same instant at millisecond precision (database round trips may add sub-millisecond noise).
    static func sameInstant(_ a: Date?, _ b: Date?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case let (a?, b?):
            return (a.timeIntervalSince1970 * 1000).rounded() == (b.timeIntervalSince1970 * 1000).rounded()
        default: return false
        }
    }

    static func outcome(of decision: Decision, comparedWith stored: StoredSubscription) -> DecisionOutcome {
        guard let state = decision.state else { return .rejected }
        let old = stored.state
        let oldEntitledOrUnknown = old?.isEntitled ?? true
        if state == .revoked && old != .revoked { return .revoked }
        if state.isEntitled, let old, old == .billingRetry || old == .expired || old == .revoked {
            return .recovered
        }
        if state.isEntitled, oldEntitledOrUnknown {
            let movedForward: Bool
            if let storedExpiry = stored.expiresAt, let newExpiry = decision.expiresAt {
                movedForward = newExpiry > storedExpiry && !sameInstant(newExpiry, storedExpiry)
            } else {
                movedForward = stored.expiresAt == nil && decision.expiresAt != nil
            }
            if movedForward { return .renewed }
        }
        if state == .expired || state == .billingRetry, oldEntitledOrUnknown { return .lapsed }
        let differs =
            old != state
            || !sameInstant(stored.expiresAt, decision.expiresAt)
            || stored.productId != decision.productId
            || stored.autoRenew != decision.autoRenew
            || stored.autoRenewProductId != decision.autoRenewProductId
            || !sameInstant(stored.gracePeriodExpiresAt, decision.gracePeriodExpiresAt)
            || (stored.inBillingRetry ?? false) != decision.inBillingRetry
            || stored.expirationIntent != decision.expirationIntent
            || (decision.environment != nil && stored.environment != decision.environment)
            || (decision.latestTransactionId != nil && stored.latestTransactionId != decision.latestTransactionId)
            || !sameInstant(stored.revokedAt, decision.revokedAt)
        return differs ? .changed : .unchanged
    }
}
