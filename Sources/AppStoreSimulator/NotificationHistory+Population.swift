/// The notifications that are not one subscription's own timeline: a mass extension's failures and summary,
/// one-time purchases (ONE_TIME_CHARGE, CONSUMPTION_REQUEST, REFUND) and the notices. Production only.
extension NotificationHistory {
    /// The population-level events up to `now`; `family` limits them to one customer (the summary has none).
    static func populationEvents(_ population: Population, family: Int?, sandbox: Bool, now: Int64) -> [Event] {
        guard !sandbox else { return [] }
        var out: [Event] = []
        func add(_ e: Event) {
            guard e.date <= now, family == nil || family == e.family else { return }
            out.append(e)
        }
        for (m, mass) in population.massExtensions.enumerated() {
            for sub in mass.failed {
                let plan = population.families[sub.family].subscriptions[sub.plan]
                let index = plan.timeline(at: sub.at).transactions.last?.index ?? 0
                add(
                    Event(
                        type: "RENEWAL_EXTENSION",
                        subtype: "FAILURE",
                        date: sub.at,
                        family: sub.family,
                        plan: sub.plan,
                        transactionIndex: index
                    )
                )
            }
            if family == nil {
                add(
                    Event(
                        type: "RENEWAL_EXTENSION",
                        subtype: "SUMMARY",
                        date: mass.completedAt,
                        family: -1,
                        plan: -1,
                        transactionIndex: 0,
                        kind: .summary(m)
                    )
                )
            }
        }
        for (k, item) in population.oneTimePurchases.enumerated() {
            func one(_ type: String, _ date: Int64?) {
                guard let date else { return }
                add(
                    Event(
                        type: type,
                        subtype: nil,
                        date: date,
                        family: item.familyIndex,
                        plan: -1,
                        transactionIndex: 0,
                        kind: .oneTime(k)
                    )
                )
            }
            one("ONE_TIME_CHARGE", item.purchase)
            one("CONSUMPTION_REQUEST", item.refundRequestedAt)
            one("REFUND", item.refundedAt)
        }
        for (k, notice) in population.notices.enumerated() {
            let type = notice.kind == .rescindConsent ? "RESCIND_CONSENT" : PopulationNotice.futureTypeName
            add(
                Event(
                    type: type,
                    subtype: nil,
                    date: notice.at,
                    family: notice.family,
                    plan: -1,
                    transactionIndex: 0,
                    kind: .notice(k)
                )
            )
        }
        return out
    }

    /// The id that keys an event's UUID and delivery attempts.
    static func key(of e: Event, _ population: Population) -> UInt64 {
        switch e.kind {
        case .subscription: return population.families[e.family].subscriptions[e.plan].originalTransactionId
        case .oneTime(let k): return population.oneTimePurchases[k].transactionId
        case .summary(let m): return SeededRandom.hash(0x5077, UInt64(m))
        case .notice(let k): return SeededRandom.hash(0x7071, UInt64(k), UInt64(e.family))
        }
    }
}
