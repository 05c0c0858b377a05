/// The events App Store Connect's reports are made of, from the population's timelines (docs/simulator.md, "App Store
/// Connect reports"): the production transactions of the served customers (`LedgerExporter.isServed`, the same ones
/// `ledger.jsonl` lists) and of the lost orders (`Population.lostOrders`), without a family member's copies (the
/// purchaser's transaction is the sale), and their refunds (a family revocation is no refund). One-time purchases are
/// not in it.
struct SalesTruth: Sendable {
    let population: Population

    /// The families whose sales Apple reports: the served production ones, then the lost orders.
    var reportedFamilies: [ReceiptFamily] {
        population.families.filter { !$0.sandbox && LedgerExporter.isServed($0, bundleId: population.bundleId) }
            + population.lostOrders
    }

    /// One reported subscription as the world stood at some instant: its customer's storefront and anonymised
    /// subscriber id, its timeline, and each transaction's price and proceeds rate (`ProceedsRule`).
    struct ReportedPlan {
        let plan: SubscriptionPlan
        let timeline: SubscriptionTimeline
        let storefront: Storefront
        let subscriberId: String
        let prices: [Int64]
        let afterOneYear: [Bool]
        let lostOrder: Bool
    }

    /// Every reported family's subscriptions at `asOf`, a family member's copies left out.
    func reportedPlans(asOf: Int64) -> [ReportedPlan] {
        let lost = Set(population.lostOrders.map(\.index))
        var plans: [ReportedPlan] = []
        for family in reportedFamilies {
            let storefront = Storefront.of(seed: population.seed, familyIndex: family.index)
            let subscriber = String(
                7_000_000_000 + SeededRandom.hash(population.seed, 0x5B5C, UInt64(family.index)) % 1_000_000_000
            )
            for plan in family.subscriptions where !plan.familyShared {
                let timeline = plan.timeline(at: asOf)
                let prices = timeline.transactions.map { storefront.price(of: $0, anchor: population.anchor) }
                plans.append(
                    ReportedPlan(
                        plan: plan,
                        timeline: timeline,
                        storefront: storefront,
                        subscriberId: subscriber,
                        prices: prices,
                        afterOneYear: ProceedsRule.afterOneYear(timeline.transactions, prices: prices),
                        lostOrder: lost.contains(family.index)
                    )
                )
            }
        }
        return plans
    }

    /// The events at or after `from` and before `until` (UTC ms), as the world stood at `asOf`, by instant then
    /// transaction id (purchases before refunds).
    func events(from: Int64, until: Int64, asOf: Int64) -> [SalesEvent] {
        var events: [SalesEvent] = []
        for reported in reportedPlans(asOf: asOf) {
            for (index, t) in reported.timeline.transactions.enumerated() where !t.familyShared {
                let base = SalesEvent(
                    kind: .purchase,
                    at: t.purchase,
                    transaction: t,
                    storefront: reported.storefront,
                    customerPrice: reported.prices[index],
                    proceeds: ProceedsRule.proceeds(
                        of: reported.prices[index],
                        afterOneYear: reported.afterOneYear[index],
                        storefront: reported.storefront
                    ),
                    afterOneYear: reported.afterOneYear[index],
                    subscriberId: reported.subscriberId,
                    lostOrder: reported.lostOrder
                )
                if t.purchase >= from, t.purchase < until { events.append(base) }
                if let refund = refundEvent(base), refund.at >= from, refund.at < until { events.append(refund) }
            }
        }
        return events.sorted {
            ($0.at, $0.transaction.transactionId, $0.units) < ($1.at, $1.transaction.transactionId, $1.units)
        }
    }

    /// The refund of a purchase, if it was refunded: the refunded amount (prorated or full) and its proceeds at the
    /// purchase's commission rate (a refund takes back what Apple paid for it).
    func refundEvent(_ purchase: SalesEvent) -> SalesEvent? {
        guard let revocation = ServerAPIRenderer.revocation(of: purchase.transaction, seed: population.seed),
            revocation.type != "FAMILY_REVOKE"
        else { return nil }
        let amount = LedgerExporter.refunded(
            price: purchase.customerPrice,
            revocation.percentage,
            minorUnit: purchase.storefront.minorUnit
        )
        guard amount > 0 else { return nil }
        var refund = purchase
        refund.kind = .refund
        refund.at = revocation.date
        refund.customerPrice = -amount
        refund.proceeds = ProceedsRule.proceeds(
            of: -amount,
            afterOneYear: purchase.afterOneYear,
            storefront: purchase.storefront
        )
        return refund
    }
}
