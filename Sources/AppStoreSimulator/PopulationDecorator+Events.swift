/// The population-level events of `PopulationDecorator`.
extension PopulationDecorator {
    /// One mass extension of `pro.monthly` in GBR and CAN, 9 days before the anchor, by 5 days (see
    /// `MassExtension` for who is extended).
    func massExtension(_ families: inout [ReceiptFamily]) -> MassExtension? {
        let requestedAt = anchor - 9 * SimTime.day
        let window: Int64 = 6 * SimTime.hour
        var mass = MassExtension(
            requestIdentifier: AppAccountToken.uuid(SeededRandom.hash(seed, 0x3A55), SeededRandom.hash(seed, 0x3A56)),
            productId: catalog.proMonthly.productId,
            storefrontCountryCodes: ["CAN", "GBR"],
            requestedAt: requestedAt,
            completedAt: requestedAt + window,
            days: 5,
            succeeded: [],
            failed: []
        )
        for f in families.indices where isServedProduction(families[f]) {
            let code = Storefront.of(seed: seed, familyIndex: families[f].index).code
            guard mass.storefrontCountryCodes.contains(code) else { continue }
            for p in families[f].subscriptions.indices {
                let plan = families[f].subscriptions[p]
                let then = plan.timeline(at: requestedAt)
                guard let current = then.transactions.last, current.product == catalog.proMonthly,
                    current.expires > requestedAt, !current.isRefunded, then.autoRenewStatus
                else { continue }
                let at =
                    requestedAt + 1
                    + Int64(SeededRandom.hash(seed, 0x3A57, plan.originalTransactionId) % UInt64(window - 2))
                let latest = plan.timeline(at: anchor).transactions.last
                if families[f].scenario == .silentRenewal, plan.extensions.isEmpty, latest?.index == current.index {
                    families[f].subscriptions[p].extensions.append(
                        .init(at: at, days: mass.days, requestIdentifier: mass.requestIdentifier)
                    )
                    mass.succeeded.append(.init(family: f, plan: p, at: at))
                } else {
                    mass.failed.append(.init(family: f, plan: p, at: at))
                }
            }
        }
        return mass.succeeded.isEmpty && mass.failed.isEmpty ? nil : mass
    }

    /// One in ten served production families bought one or two one-time products in the 150 days before the
    /// anchor; a quarter of those purchases were refunded (half of them after a CONSUMPTION_REQUEST).
    func oneTimePurchases(_ families: [ReceiptFamily]) -> [OneTimePurchase] {
        var out: [OneTimePurchase] = []
        for family in families where isServedProduction(family) {
            let h = SeededRandom.hash(seed, 0x0E71, UInt64(family.index))
            guard h % 10 == 4 else { continue }
            for k in 0..<(1 + Int((h >> 8) % 2)) {
                let g = SeededRandom.hash(seed, 0x0E72, UInt64(family.index), UInt64(k))
                let consumable = g % 3 != 0
                let purchase = anchor - SimTime.hour - Int64((g >> 8) % 12_960_000) * 1000
                var item = OneTimePurchase(
                    transactionId: oneTimeBase + UInt64(out.count),
                    familyIndex: family.index,
                    kind: consumable ? .consumable : .nonConsumable,
                    productId: bundleId + (consumable ? ".coins.100" : ".themes.lifetime"),
                    purchase: purchase
                )
                if (g >> 40) % 4 == 0 {
                    let refunded = purchase + SimTime.day + Int64((g >> 44) % 864) * 1000 * 1000
                    item.refundedAt = refunded
                    if (g >> 56) % 2 == 0 {
                        item.refundRequestedAt = max(purchase + SimTime.hour, refunded - 12 * SimTime.hour)
                    }
                }
                out.append(item)
            }
        }
        return out
    }

    /// RESCIND_CONSENT for about one served production family in a hundred (at least one), and one notification of an
    /// undocumented type.
    func notices(_ families: [ReceiptFamily]) -> [PopulationNotice] {
        let served = families.filter(isServedProduction)
        guard let first = served.first else { return [] }
        var out: [PopulationNotice] = []
        for family in served where SeededRandom.hash(seed, 0x8C5D, UInt64(family.index)) % 97 == 5 {
            let h = SeededRandom.hash(seed, 0x8C5E, UInt64(family.index))
            out.append(
                .init(
                    kind: .rescindConsent,
                    family: family.index,
                    at: anchor - SimTime.day - Int64(h % 5_000_000) * 1000
                )
            )
        }
        if out.isEmpty { out.append(.init(kind: .rescindConsent, family: first.index, at: anchor - 2 * SimTime.day)) }
        let pick = served[Int(SeededRandom.hash(seed, 0x8C5F) % UInt64(served.count))]
        out.append(.init(kind: .futureType, family: pick.index, at: anchor - 3 * SimTime.day - 17 * SimTime.minute))
        return out.sorted { ($0.at, $0.family) < ($1.at, $1.family) }
    }
}
