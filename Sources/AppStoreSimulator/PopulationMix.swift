/// What the population is for (docs/simulator.md, "Mixes"): `scenarios`, every case the reconciler must get right
/// in test proportions (the default, which the tests and benchmarks are written against); `retail`, a month that
/// looks like a real app's, for the reports and the tie-out.
///
/// `retail` draws mostly ordinary customers (renewing, churning, on trials and offers), a tail of refunds, billing
/// problems and plan changes at a few percent, and none of the faults (foreign receipts, implausible values, rows
/// the app got wrong). Current periods spread over whole billing periods, so renewals fall on every day, and the
/// ordinary customers carry events after the anchor (`PopulationGenerator.retailFuture`): they churn, ask for
/// refunds and fail to bill in the nights that follow, at rates like a real app's.
public enum PopulationMix: String, Sendable, CaseIterable {
    case scenarios
    case retail

    /// A retail deck's scenarios and their parts of 180.
    static let retailWeights: [(Scenario, Int)] = [
        (.activeNotRenewed, 55), (.silentRenewal, 45), (.autoRenewOffExpired, 16), (.expiredLongAgo, 14),
        (.billingRetry, 5), (.gracePeriod, 3), (.refundedOther, 1), (.refundedAppIssue, 1), (.olderPeriodRefunded, 2),
        (.upgraded, 3), (.pendingDowngrade, 2), (.pendingCrossgrade, 1), (.freeTrial, 10), (.introOffer, 6),
        (.familyShared, 5), (.sandbox, 2), (.multiGroup, 4), (.deletedAccount, 1), (.longHistory, 2), (.winBack, 1),
        (.priceIncreaseLapsed, 1),
    ]

    /// The scenarios whose customers `retailFuture` gives events after the anchor: ordinary, auto-renewing ones.
    static let ordinary: Set<Scenario> = [.activeNotRenewed, .silentRenewal, .introOffer, .freeTrial, .multiGroup]

    /// The retail deck of cycle `cycle`: every scenario its weight times, shuffled by the seed.
    static func retailDeck(seed: UInt64, cycle: Int) -> [Scenario] {
        var deck: [Scenario] = []
        for (scenario, weight) in retailWeights { deck += Array(repeating: scenario, count: weight) }
        var rng = SeededRandom(seed, 0x2E7A, UInt64(cycle))
        for i in stride(from: deck.count - 1, to: 0, by: -1) {
            deck.swapAt(i, Int(rng.next() % UInt64(i + 1)))
        }
        return deck
    }
}
