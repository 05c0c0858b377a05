/// The generator's second pass (docs/simulator.md, "2026 shapes"): data added to existing families, each decision
/// drawn from its own hash of (seed, family), never from the family's random stream, so no family's scenario,
/// ids or dates change unless a decision here changes them on purpose; and the population-level events (one-time
/// purchases, a mass extension, RESCIND_CONSENT and an undocumented notification type).
struct PopulationDecorator {
    let seed: UInt64
    let anchor: Int64
    let bundleId: String
    let catalog: ProductCatalog
    /// First one-time purchase id: far above any subscription id of the population.
    let oneTimeBase: UInt64

    /// The increase on `news.monthly` (every storefront): announced 14 days before the anchor, effective for
    /// renewals from 30 days after it.
    var increaseAnnounced: Int64 { anchor - 14 * SimTime.day }
    var increaseEffective: Int64 { anchor + 30 * SimTime.day }

    func isServedProduction(_ family: ReceiptFamily) -> Bool {
        !family.sandbox && family.bundleId == bundleId && family.fixedStatus != 21010
    }

    private func hash(_ label: UInt64, _ family: Int, _ extra: UInt64 = 0) -> UInt64 {
        SeededRandom.hash(seed, label, UInt64(family), extra)
    }

    /// Adds every per-family shape, then the population-level ones.
    func decorate(
        _ families: inout [ReceiptFamily]
    ) -> (
        oneTime: [OneTimePurchase], mass: [MassExtension], notices: [PopulationNotice]
    ) {
        for i in families.indices where isServedProduction(families[i]) {
            decoratePlans(&families[i])
        }
        let mass = massExtension(&families)
        return (oneTimePurchases(families), mass.map { [$0] } ?? [], notices(families))
    }

    /// Commitment billing, a single renewal-date extension, a promotional offer, the pending price increase and
    /// refund requests, on a few families each.
    private func decoratePlans(_ family: inout ReceiptFamily) {
        let h = hash(0xDEC0, family.index)
        let ordinary = family.scenario == .silentRenewal || family.scenario == .activeNotRenewed
        for p in family.subscriptions.indices {
            var plan = family.subscriptions[p]
            let latest = plan.timeline(at: anchor).transactions.last
            if family.scenario == .silentRenewal, let latest {
                if h % 5 == 2, plan.product == catalog.proMonthly {
                    plan.commitmentMonths = 12
                } else if h % 40 == 1 {
                    let at = latest.purchase + (anchor - latest.purchase) / 2
                    plan.extensions.append(.init(at: at, days: 7 + Int64((h >> 20) % 24), requestIdentifier: nil))
                }
            }
            if ordinary, h % 12 == 3, plan.autoRenewOffAt == nil, plan.commitmentMonths == nil, !plan.trial,
                plan.introCount == 0, let latest, latest.index >= 2
            {
                let first = latest.index - Int((h >> 8) % 2)
                plan.promotionalOffer = .init(
                    identifier: "RETAIN_HALF_OFF",
                    firstIndex: first,
                    count: 1 + Int((h >> 12) % 3)
                )
            }
            addPriceIncrease(&plan, family: family)
            addRefundRequests(&plan, family: family, ordinary: ordinary)
            family.subscriptions[p] = plan
        }
    }

    /// Every `news.monthly` subscription active and auto-renewing from the announcement to the anchor gets the
    /// increase; six in ten consented before the anchor.
    private func addPriceIncrease(_ plan: inout SubscriptionPlan, family: ReceiptFamily) {
        guard plan.product == catalog.newsMonthly, plan.upgrade == nil, plan.planChange == nil,
            plan.resubscription == nil, plan.winBack == nil, plan.priceIncrease == nil
        else { return }
        let before = plan.timeline(at: increaseAnnounced)
        let now = plan.timeline(at: anchor)
        guard let a = before.transactions.last, a.expires > increaseAnnounced, !a.isRefunded, before.autoRenewStatus,
            let b = now.transactions.last, b.expires > anchor, !b.isRefunded, now.autoRenewStatus
        else { return }
        let h = hash(0x9A1C, family.index)
        let span = UInt64(anchor - increaseAnnounced - 2 * SimTime.hour)
        let consented = h % 10 < 6 ? increaseAnnounced + SimTime.hour + Int64((h >> 8) % span) : nil
        plan.priceIncrease = .init(
            announcedAt: increaseAnnounced,
            effectiveAt: increaseEffective,
            consentedAt: consented
        )
    }

    /// Half the refunds were preceded by Apple's CONSUMPTION_REQUEST; one in 25 ordinary families asked for a refund
    /// of their latest period that Apple declined (REFUND_DECLINED) or has not decided by the anchor.
    private func addRefundRequests(_ plan: inout SubscriptionPlan, family: ReceiptFamily, ordinary: Bool) {
        for refund in plan.refunds where !plan.familyShared {
            let h = hash(0xC0A5, family.index, UInt64(refund.transactionIndex))
            guard h % 2 == 0,
                let t = plan.timeline(at: refund.at).transactions.first(where: { $0.index == refund.transactionIndex })
            else { continue }
            let requested = max(
                t.purchase + SimTime.hour,
                refund.at - 6 * SimTime.hour - Int64((h >> 8) % 2_592_000) * 100
            )
            guard requested < refund.at else { continue }
            plan.refundRequests.append(
                .init(transactionIndex: refund.transactionIndex, requestedAt: requested, declinedAt: nil)
            )
        }
        let h = hash(0xC0A6, family.index)
        guard ordinary, h % 25 == 7, let latest = plan.timeline(at: anchor).transactions.last else { return }
        let requested = max(
            latest.purchase + SimTime.hour,
            anchor - 2 * SimTime.hour - Int64((h >> 8) % 5_184_000) * 100
        )
        let declined = requested + SimTime.day + Int64((h >> 32) % 3_456_000) * 100
        plan.refundRequests.append(.init(transactionIndex: latest.index, requestedAt: requested, declinedAt: declined))
    }
}
