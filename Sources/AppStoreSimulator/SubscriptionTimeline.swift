/// A subscription evaluated at one instant: the transactions that exist and the renewal info.
public struct SubscriptionTimeline: Sendable {
    /// Why renewals stopped, if they did by the evaluation instant.
    public enum Stop: Sendable, Equatable {
        case autoRenewOff
        case billingFailure
        case maxRenewals
        /// The customer never consented to a price increase that needs consent (expirationIntent 3).
        case priceIncreaseDeclined
    }

    public var transactions: [SimTransaction]
    public var stop: Stop?
    public var autoRenewStatus: Bool
    public var autoRenewProductId: String
    public var productId: String
    /// `expiration_intent` (1 customer, 2 billing, 3 declined price increase), present only once the latest
    /// transaction expired.
    public var expirationIntent: Int?
    public var inBillingRetry: Bool
    /// Grace period end, reported only while in grace.
    public var gracePeriodExpires: Int64?
}

extension SubscriptionPlan {
    /// Evaluates the plan at `now`: transactions purchased at or before `now`, refunds, upgrades and
    /// resubscriptions that happened by then, and the renewal info Apple reports at that instant.
    public func timeline(at now: Int64) -> SubscriptionTimeline {
        var walk = TimelineWalk(self, now: now)
        while walk.purchase <= now {
            guard walk.step(self) else { break }
        }
        return renewalState(walk.txns, stop: walk.stop, wonBack: walk.winBackStart != nil, now: now)
    }

    /// The renewal info at `now` of transactions `txns` whose renewals stopped for `stop` (if they did).
    private func renewalState(
        _ txns: [SimTransaction],
        stop: SubscriptionTimeline.Stop?,
        wonBack: Bool,
        now: Int64
    ) -> SubscriptionTimeline {
        let latest = txns.max { a, b in a.purchase < b.purchase }
        let lastExpiry = latest?.expires ?? start
        let currentProduct = latest?.product ?? product
        var autoRenew = true
        if let off = autoRenewOffAt, off <= now, !wonBack { autoRenew = false }
        if stop == .maxRenewals || stop == .priceIncreaseDeclined { autoRenew = false }
        var inRetry = false
        var grace: Int64?
        var intent: Int?
        if stop == .billingFailure {
            inRetry = now < lastExpiry + SubscriptionPlan.billingRetryWindow
            if !inRetry { autoRenew = false }
            if let days = graceDays, now < lastExpiry + days * SimTime.day { grace = lastExpiry + days * SimTime.day }
            intent = 2
        } else if lastExpiry <= now {
            intent = stop == .priceIncreaseDeclined ? 3 : 1
        }
        if lastExpiry > now { intent = nil }
        var renewProduct = currentProduct.productId
        if let change = planChange, change.decidedAt <= now, change.to != currentProduct {
            renewProduct = change.to.productId
        }
        return SubscriptionTimeline(
            transactions: txns,
            stop: stop,
            autoRenewStatus: autoRenew,
            autoRenewProductId: renewProduct,
            productId: currentProduct.productId,
            expirationIntent: intent,
            inBillingRetry: inRetry,
            gracePeriodExpires: grace
        )
    }
}

extension SubscriptionPlan {
    /// The offer of transaction `index`: a free trial or introductory period (an offer code's when the plan has a
    /// code), a promotional offer's periods, or the first periods after a win-back at `winBackStart`.
    func offer(index: Int, isTrial: Bool, isIntro: Bool, winBackStart: Int?) -> SubscriptionOffer? {
        if isTrial {
            return SubscriptionOffer(
                type: 1,
                identifier: nil,
                discountType: SubscriptionOffer.freeTrial,
                period: sandbox ? "P3D" : "P\(trialDays)D"
            )
        }
        if isIntro {
            return SubscriptionOffer(
                type: offerCodeRefName == nil ? 1 : 3,
                identifier: offerCodeRefName,
                discountType: SubscriptionOffer.payAsYouGo,
                period: SubscriptionOffer.duration(product, periods: introCount)
            )
        }
        if let start = winBackStart, let back = winBack {
            guard index < start + back.count else { return nil }
            return SubscriptionOffer(
                type: 4,
                identifier: back.offerIdentifier,
                discountType: SubscriptionOffer.payAsYouGo,
                period: SubscriptionOffer.duration(back.to, periods: back.count)
            )
        }
        if let promo = promotionalOffer, index >= promo.firstIndex, index < promo.firstIndex + promo.count {
            return SubscriptionOffer(
                type: 2,
                identifier: promo.identifier,
                discountType: SubscriptionOffer.payAsYouGo,
                period: SubscriptionOffer.duration(product, periods: promo.count)
            )
        }
        return nil
    }
}
