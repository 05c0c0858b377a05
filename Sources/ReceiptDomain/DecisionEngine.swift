import CivilTime
import Foundation

/// Decides a subscription's new row values from what Apple said (`SubscriptionEvidence`, from verifyReceipt or the
/// App Store Server API): a pure function of (stored row, evidence, now, configured bundle id).
///
/// Every rule, with Apple's wording and sources, is in docs/decision-rules.md. In short:
/// - only the `_ms` dates are used; arrays may be in any order; `pending_renewal_info` is matched by
///   `original_transaction_id`, never by index;
/// - transactions come from `latest_receipt_info`, or `receipt.in_app` when that is absent or empty;
/// - a transaction with a cancellation and **not** `is_upgraded` was refunded or revoked and counts as
///   never purchased; an `is_upgraded` transaction was replaced by the upgraded-to one and entitles nothing
///   after the upgrade, with or without a cancellation date;
/// - expiry = the latest expiry over the remaining transactions (neither refunded nor upgraded); product
///   and latest transaction id come from that transaction. Apple's answer is the truth: an expiry earlier
///   than the stored one is taken (and recorded as moved backwards), whatever the cause;
/// - `revoked` iff the latest-expiring refund expires later than every remaining transaction and no
///   remaining transaction is valid at `now`; then `expires_at` = the latest remaining expiry, or (nothing
///   remains) the latest refund's cancellation time, and `revoked_at` = that refund's cancellation time;
/// - otherwise, at `now`: active iff expiry > now; grace iff expiry <= now < grace expiry;
///   billing_retry iff `is_in_billing_retry_period`; else expired;
/// - 21010 ends the entitlement (`accountNotFound(stored:now:environment:)`);
/// - bundle id mismatch, subscription absent, other non-0/21006 status or no expiry: `.rejected`,
///   nothing changed.
public enum DecisionEngine {
    /// A verifyReceipt answer: its status says whether the receipt could be read (only 0 and 21006 carry one;
    /// 21010 ends the entitlement), then the answer is decided as evidence like any other source's.
    public static func decide(
        stored: StoredSubscription,
        response: VerifyReceiptResponse,
        now: Date,
        bundleId: String?
    ) -> Decision {
        if response.status == 21010 {
            return accountNotFound(stored: stored, now: now, environment: response.environment)
        }
        if response.status != 0 && response.status != 21006 {
            let reason: VerdictReason
            switch VerifyClassifier.classify(response: response, requestedEnvironment: nil) {
            case .switchEnvironment(let target):
                reason = VerdictReason(
                    target == .sandbox ? .sandboxReceiptInProduction : .productionReceiptInSandbox,
                    appleStatus: response.status
                )
            case let verdict:
                reason = verdict.reason ?? VerdictReason(.unknownStatus, appleStatus: response.status)
            }
            return rejected(stored, reason)
        }
        return decide(
            stored: stored,
            evidence: SubscriptionEvidence(verifyReceipt: response),
            now: now,
            bundleId: bundleId
        )
    }

    /// The one decision, whichever API answered (docs/decision-rules.md): a foreign answer never extends anything;
    /// the transactions give the entitlement; the renewal info the auto-renew fields; the state at `now`; then
    /// Apple's status, when the source has one, within the precedence of docs/decision-rules.md ("Precedence").
    public static func decide(
        stored: StoredSubscription,
        evidence: SubscriptionEvidence,
        now: Date,
        bundleId: String?
    ) -> Decision {
        let otid = stored.originalTransactionId
        if let expected = bundleId ?? stored.bundleId, evidence.bundleId != expected {
            let detail = evidence.bundleId.map { "receipt is for \($0), expected \(expected)" }
            return rejected(
                stored,
                VerdictReason(.bundleMismatch, detail: detail ?? "receipt has no bundle_id, expected \(expected)")
            )
        }
        // This subscription's transactions, deduplicated and in purchase order.
        let transactions = ordered(evidence.transactions.filter { $0.originalTransactionId == otid })
        if transactions.isEmpty {
            return rejected(stored, VerdictReason(.subscriptionNotInReceipt, detail: "original_transaction_id \(otid)"))
        }
        guard transactions.contains(where: { $0.expiresDate != nil }),
            let entitlement = entitlement(of: transactions, now: now)
        else {
            return rejected(stored, VerdictReason(.notASubscription, detail: "original_transaction_id \(otid)"))
        }
        var decision = decision(
            stored: stored,
            entitlement: entitlement,
            renewal: evidence.renewalInfo.first { $0.originalTransactionId == otid },
            now: now
        )
        decision.environment = evidence.environment ?? stored.environment
        decision.subscriptionGroupIdentifier =
            entitlement.source.subscriptionGroupIdentifier
            ?? transactions.lazy.compactMap(\.subscriptionGroupIdentifier).first
        decision.latestReceipt = evidence.latestReceipt
        decision.ledger = makeLedger(transactions, originalTransactionId: otid)
        decision.signedTransactionInfo = evidence.signedTransactionInfo
        decision.signedRenewalInfo = evidence.signedRenewalInfo
        if let status = evidence.status { applyAppleStatus(status, to: &decision, evidence: evidence) }
        decision.outcome = outcome(of: decision, comparedWith: stored)
        return decision
    }

    /// The row's new values from the entitlement and the renewal info (kept from the stored row when the answer
    /// has none), the state at `now`, and an expiry moving backwards recorded with its cause.
    private static func decision(
        stored: StoredSubscription,
        entitlement: Entitlement,
        renewal pending: PendingRenewalInfo?,
        now: Date
    ) -> Decision {
        var notes = entitlement.notes
        let expiresAt = entitlement.expiresAt
        // Apple's answer is the truth; a move backwards is recorded, never refused (docs/decision-rules.md).
        var movedBackwardsReason: String?
        if let storedExpiry = stored.expiresAt, expiresAt < storedExpiry, !sameInstant(expiresAt, storedExpiry) {
            movedBackwardsReason = backwardsReason(
                from: storedExpiry,
                to: expiresAt,
                storedProduct: stored.productId,
                newProduct: entitlement.source.productId,
                cause: backwardsCause(
                    isRevoked: entitlement.isRevoked,
                    topRefund: entitlement.topRefund,
                    expiresAt: expiresAt,
                    upgraded: entitlement.upgraded
                )
            )
        }
        if pending == nil {
            notes.append("no pending_renewal_info for this subscription: auto-renew fields kept from the stored row")
        }
        let graceExpiry = pending?.gracePeriodExpiresDate
        let inBillingRetry = pending?.isInBillingRetryPeriod ?? false
        let state: SubscriptionState
        if entitlement.isRevoked {
            state = .revoked
        } else if entitlement.upgradedAway {
            state = .expired  // replaced: no grace period or billing retry for a transaction that was upgraded
        } else if expiresAt > now {
            state = .active
        } else if let graceExpiry, now < graceExpiry {
            state = .gracePeriod
        } else if inBillingRetry {
            state = .billingRetry
        } else {
            state = .expired
        }
        let source = entitlement.source
        var decision = Decision(
            outcome: .unchanged,
            originalTransactionId: stored.originalTransactionId,
            state: state,
            expiresAt: expiresAt,
            productId: source.productId,
            autoRenew: pending.map(\.autoRenewStatus) ?? stored.autoRenew,
            autoRenewProductId: pending.map(\.autoRenewProductId) ?? stored.autoRenewProductId,
            expirationIntent: pending.map(\.expirationIntent) ?? stored.expirationIntent,
            gracePeriodExpiresAt: graceExpiry,
            inBillingRetry: inBillingRetry,
            isTrial: source.isTrialPeriod,
            isIntroOffer: source.isInIntroOfferPeriod,
            latestTransactionId: source.transactionId,
            revokedAt: entitlement.revokedAt,
            cancellationReason: entitlement.cancellationReason,
            environment: stored.environment,
            subscriptionGroupIdentifier: nil,
            latestReceipt: nil,
            ledger: [],
            expiryMovedBackwards: movedBackwardsReason != nil,
            expiryMovedBackwardsReason: movedBackwardsReason,
            rejectReason: nil,
            notes: notes
        )
        decision.customer = CustomerFacts(renewal: pending, source: source)
        return decision
    }

    // MARK: - Pieces

    /// When an upgraded (replaced) transaction's entitlement ended: its cancellation (upgrade) time when
    /// Apple gives one, else the purchase of the next transaction bought after it, else its expiry; never
    /// later than `now` (it entitles nothing after the upgrade).
    static func upgradeEnd(_ transaction: ReceiptTransaction, in ordered: [ReceiptTransaction], now: Date) -> Date? {
        guard let expires = transaction.expiresDate else { return nil }
        var end = expires
        if let upgradedAt = transaction.cancellationDate {
            end = min(end, upgradedAt)
        } else if let purchased = transaction.purchaseDate,
            let successor = ordered.lazy.compactMap(\.purchaseDate).first(where: { $0 > purchased })
        {
            end = min(end, successor)
        }
        return min(end, now)
    }

    /// Why the expiry moved backwards, in words support and finance can act on.
    static func backwardsCause(
        isRevoked: Bool,
        topRefund: ReceiptTransaction?,
        expiresAt: Date,
        upgraded: [ReceiptTransaction]
    ) -> String {
        if let topRefund, isRevoked || (topRefund.expiresDate.map { $0 > expiresAt } ?? false) {
            return "transaction \(topRefund.transactionId) was refunded/revoked"
                + (topRefund.cancellationDate.map { " at " + RFC3339.string($0) } ?? "")
        }
        if let replaced = upgraded.first(where: { ($0.expiresDate ?? .distantPast) > expiresAt }) {
            return "transaction \(replaced.transactionId) was replaced by an upgrade"
        }
        return "Apple's answer has an earlier expiry than the stored row (nothing refunded)"
    }

    static func backwardsReason(
        from old: Date,
        to new: Date,
        storedProduct: String,
        newProduct: String,
        cause: String
    )
        -> String
    {
        var text = "\(cause): expiry moves back from \(RFC3339.string(old)) to \(RFC3339.string(new))"
        if !storedProduct.isEmpty, storedProduct != newProduct { text += ", product \(storedProduct) -> \(newProduct)" }
        return text
    }

    /// 21010: Apple says the receipt "could not be authorized; treat this the same as if a purchase was never
    /// made". The entitlement ends now: state `expired`, expiry no later than `now` (recorded as moved
    /// backwards when it was later), auto-renew off; the stored receipt is kept (docs/decision-rules.md).
    public static func accountNotFound(
        stored: StoredSubscription,
        now: Date,
        environment: AppleEnvironment?
    ) -> Decision {
        let reason = VerdictReason(.accountNotFound, appleStatus: 21010)
        var expiresAt = now
        var movedBackwards = false
        var movedBackwardsReason: String?
        if let storedExpiry = stored.expiresAt {
            if storedExpiry <= now || sameInstant(storedExpiry, now) {
                expiresAt = storedExpiry
            } else {
                movedBackwards = true
                movedBackwardsReason = backwardsReason(
                    from: storedExpiry,
                    to: now,
                    storedProduct: stored.productId,
                    newProduct: stored.productId,
                    cause: "Apple answered 21010 (treat as if never purchased)"
                )
            }
        }
        var decision = Decision(
            outcome: .unchanged,
            originalTransactionId: stored.originalTransactionId,
            state: .expired,
            expiresAt: expiresAt,
            productId: stored.productId,
            autoRenew: false,
            autoRenewProductId: stored.autoRenewProductId,
            expirationIntent: stored.expirationIntent,
            gracePeriodExpiresAt: nil,
            inBillingRetry: false,
            isTrial: false,
            isIntroOffer: false,
            latestTransactionId: stored.latestTransactionId,
            revokedAt: nil,
            cancellationReason: nil,
            environment: environment ?? stored.environment,
            subscriptionGroupIdentifier: nil,
            latestReceipt: nil,
            ledger: [],
            expiryMovedBackwards: movedBackwards,
            expiryMovedBackwardsReason: movedBackwardsReason,
            rejectReason: nil,
            notes: ["\(reason.code.rawValue): \(reason): entitlement ended"]
        )
        decision.outcome = outcome(of: decision, comparedWith: stored)
        return decision
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
            var entry = LedgerEntry(
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
            )
            entry.signedFacts = transaction.signedFacts
            entries.append(entry)
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
    public static func sameInstant(_ a: Date?, _ b: Date?) -> Bool {
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
