/// What the renewal info says about the next renewal (price, currency, offer, price increase, billing plan), shared
/// by the signed renewal info and `truth.jsonl` so that both say the same; and the commitment of a commitment plan.
extension ServerAPIRenderer {
    public struct RenewalFacts: Sendable, Equatable {
        /// `renewalPrice` (milliunits) and `currency`, while auto-renew is on.
        public var price: Int64?
        public var currency: String?
        /// The offer the next renewal is billed under (a promotional or win-back period still to come).
        public var offer: SubscriptionOffer?
        /// `priceIncreaseStatus`: 0 not yet responded, 1 consented; nil when no increase was announced.
        public var priceIncreaseStatus: Int?
        /// `renewalBillingPlanType` (`MONTHLY` for a commitment plan).
        public var billingPlanType: String?
        /// The billing period of the product that renews (`autoRenewProductId`), with `price`.
        public var period: SimProduct.Period?
    }

    static func products(_ c: ProductCatalog) -> [SimProduct] {
        [c.proMonthly, c.proYearly, c.proPlusMonthly, c.newsWeekly, c.newsMonthly, c.newsYearly]
    }

    /// The facts of the renewal after `tl`'s latest transaction, as of `at`: what the renewal info signs, and what
    /// the trends truth values MRR at (docs/simulator.md, "Trends truth").
    public static func renewalFacts(
        population: Population,
        _ tl: SubscriptionTimeline,
        plan: SubscriptionPlan,
        family: ReceiptFamily,
        at: Int64
    )
        -> RenewalFacts
    {
        var facts = RenewalFacts()
        if let increase = plan.priceIncrease, increase.announcedAt <= at {
            facts.priceIncreaseStatus = increase.consentedAt.map { $0 <= at ? 1 : 0 } ?? 0
        }
        if plan.commitmentMonths != nil { facts.billingPlanType = "MONTHLY" }
        guard let latest = tl.transactions.max(by: { $0.purchase < $1.purchase }), tl.autoRenewStatus else {
            return facts
        }
        let storefront = Storefront.of(seed: population.seed, familyIndex: family.index)
        let next =
            plan.product.productId == tl.autoRenewProductId
            ? latest.product
            : (Self.products(population.catalog).first { $0.productId == tl.autoRenewProductId } ?? latest.product)
        var price = storefront.listPrice(next, purchase: latest.expires, anchor: population.anchor)
        if let increase = plan.priceIncrease, increase.announcedAt <= at, latest.expires >= increase.effectiveAt {
            price = storefront.raised(price)
        }
        let nextIndex = latest.index + 1
        let winBackStart = plan.winBack.flatMap { back in tl.transactions.first { $0.purchase == back.at }?.index }
        let paid = nextIndex - (plan.trial ? 1 : 0)
        facts.offer = plan.offer(
            index: nextIndex,
            isTrial: false,
            isIntro: paid < plan.introCount && winBackStart == nil,
            winBackStart: winBackStart
        )
        if facts.offer?.discountType == SubscriptionOffer.payAsYouGo { price = storefront.introPrice(list: price) }
        facts.price = price
        facts.currency = storefront.currency
        facts.period = next.period
        return facts
    }

    /// Writes `billingPlanType` and `commitmentInfo` of transaction `t` of a commitment plan.
    func writeCommitment(_ t: SimTransaction, plan: SubscriptionPlan, price: Int64, into w: inout JSONWriter) {
        guard let months = plan.commitmentMonths else { return }
        w.field("billingPlanType", "MONTHLY")
        w.key("commitmentInfo")
        w.beginObject()
        w.key("billingPeriodNumber")
        w.int(Int64(t.index % months + 1))
        w.key("totalBillingPeriods")
        w.int(Int64(months))
        w.key("commitmentExpiresDate")
        w.int(commitmentEnd(of: t.index, plan: plan))
        w.key("commitmentPrice")
        w.int(price)
        w.endObject()
    }

    /// End of the commitment that transaction `index` belongs to.
    func commitmentEnd(of index: Int, plan: SubscriptionPlan) -> Int64 {
        let months = Int64(plan.commitmentMonths ?? 1)
        return plan.product.periodEnd(
            from: plan.start,
            count: (Int64(index) / months + 1) * months,
            sandbox: plan.sandbox
        )
    }

    /// Writes the renewal info's `renewalBillingPlanType` and `commitmentInfo` of a commitment plan.
    func writeRenewalCommitment(
        _ tl: SubscriptionTimeline,
        plan: SubscriptionPlan,
        facts: RenewalFacts,
        into w: inout JSONWriter
    ) {
        guard let type = facts.billingPlanType, let latest = tl.transactions.last else { return }
        w.field("renewalBillingPlanType", type)
        w.key("commitmentInfo")
        w.beginObject()
        w.field("commitmentAutoRenewProductId", tl.autoRenewProductId)
        w.key("commitmentAutoRenewStatus")
        w.int(tl.autoRenewStatus ? 1 : 0)
        w.field("commitmentRenewalBillingPlanType", type)
        w.key("commitmentRenewalDate")
        w.int(commitmentEnd(of: latest.index, plan: plan))
        if let price = facts.price {
            w.key("commitmentRenewalPrice")
            w.int(price)
        }
        w.endObject()
    }

    /// Writes `offerType`, `offerIdentifier`, `offerDiscountType` and `offerPeriod`.
    static func writeOffer(_ offer: SubscriptionOffer?, into w: inout JSONWriter) {
        guard let offer else { return }
        w.key("offerType")
        w.int(Int64(offer.type))
        if let id = offer.identifier { w.field("offerIdentifier", id) }
        w.field("offerDiscountType", offer.discountType)
        w.field("offerPeriod", offer.period)
    }
}
