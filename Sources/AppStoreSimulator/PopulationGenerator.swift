/// Builds the receipt families of a `Population`, one scenario at a time.
///
/// Each family draws from its own random stream (seed, family index), so a family does not change when
/// the population grows. Times are chosen relative to the anchor with margins of hours or days, so the
/// scenario holds at the anchor (checked by the tests for many seeds).
struct PopulationGenerator {
    let seed: UInt64
    let anchor: Int64
    let bundleId: String
    let foreignBundleId: String
    let catalog: ProductCatalog
    let foreignCatalog: ProductCatalog
    let mix: PopulationMix
    private var nextSubscription: UInt64 = 0
    private let idBase: UInt64

    init(
        seed: UInt64,
        anchor: Int64,
        bundleId: String,
        foreignBundleId: String,
        catalog: ProductCatalog,
        foreignCatalog: ProductCatalog,
        mix: PopulationMix = .scenarios
    ) {
        self.seed = seed
        self.anchor = anchor
        self.bundleId = bundleId
        self.foreignBundleId = foreignBundleId
        self.catalog = catalog
        self.foreignCatalog = foreignCatalog
        self.mix = mix
        // 16-digit ids like Apple's: 1 000 0xx ... ; room for 10^9 subscriptions of 10^4 transactions each.
        self.idBase = 1_000_000_000_000_000 + (SeededRandom.mix(seed) % 90) * 10_000_000_000_000
    }

    mutating func generate(subscriptions: Int) -> [ReceiptFamily] {
        if mix == .retail { return generateRetail(subscriptions: subscriptions) }
        var families: [ReceiptFamily] = []
        var remaining = subscriptions
        var deckCycle = -1
        var deck: [Scenario] = []
        var i = 0
        while remaining > 0 {
            let cycle = i / 180
            if cycle != deckCycle {
                deck = Population.deck(seed: seed, cycle: cycle)
                deckCycle = cycle
            }
            var scenario = deck[i % deck.count]
            if scenario == .multiGroup && remaining < 2 { scenario = .silentRenewal }
            let family = makeFamily(index: i, scenario: scenario)
            remaining -= family.subscriptions.count
            families.append(family)
            i += 1
        }
        return families
    }

    /// The `retail` mix (`PopulationMix`): families drawn from its deck, cycle after cycle, the ordinary ones
    /// given their events after the anchor.
    private mutating func generateRetail(subscriptions: Int) -> [ReceiptFamily] {
        var families: [ReceiptFamily] = []
        var remaining = subscriptions
        var deck: [Scenario] = []
        var cycle = -1
        var i = 0
        while remaining > 0 {
            let position = i % PopulationMix.retailDeck(seed: seed, cycle: 0).count
            if position == 0 {
                cycle += 1
                deck = PopulationMix.retailDeck(seed: seed, cycle: cycle)
            }
            var scenario = deck[position]
            if scenario == .multiGroup && remaining < 2 { scenario = .silentRenewal }
            var family = makeFamily(index: i, scenario: scenario)
            if PopulationMix.ordinary.contains(scenario) {
                var rng = SeededRandom(seed, 0xF07E, UInt64(i))
                for k in family.subscriptions.indices { retailFuture(&family.subscriptions[k], &rng) }
            }
            remaining -= family.subscriptions.count
            families.append(family)
            i += 1
        }
        return families
    }

    /// What an ordinary customer of the `retail` mix does in the 45 days after the anchor, at rates like a real
    /// app's month (docs/simulator.md, "Mixes"): 8% turn auto-renew off, 4% get a renewal refunded a few days after
    /// it was charged, 2% fail to bill from a day on (half of them in a grace period first); a free trial still
    /// running at the anchor is cancelled before it converts in 30% of cases. Nothing changes before the anchor.
    private func retailFuture(_ plan: inout SubscriptionPlan, _ rng: inout SeededRandom) {
        let day = SimTime.day
        let horizon = anchor + 45 * day
        if plan.trial, plan.start + plan.trialDays * day > anchor, rng.chance(0.3) {
            plan.autoRenewOffAt =
                anchor + rng.between(SimTime.hour, max(2 * SimTime.hour, plan.start + plan.trialDays * day - anchor))
            return
        }
        guard plan.autoRenewOffAt == nil, plan.billingFailsFrom == nil, plan.refunds.isEmpty else { return }
        let u = rng.unit()
        if u < 0.08 {
            plan.autoRenewOffAt = anchor + rng.between(SimTime.hour, 45 * day)
        } else if u < 0.12 {
            let transactions = plan.timeline(at: horizon).transactions
            guard let t = transactions.first(where: { $0.purchase > anchor && !$0.isTrial && $0.offer == nil }) else {
                return
            }
            let at = t.purchase + rng.between(6 * SimTime.hour, 6 * day)
            plan.refunds = [.init(transactionIndex: t.index, at: at, reason: rng.int(0...1))]
            plan.autoRenewOffAt = at
        } else if u < 0.14 {
            plan.billingFailsFrom = anchor + rng.between(day, 40 * day)
            if rng.chance(0.5) { plan.graceDays = plan.product.period == .week ? 6 : 16 }
        }
    }

    /// `count` customers whose purchases never reached the app's database (docs/simulator.md, "Lost orders"):
    /// ordinary active subscribers (`active_not_renewed` histories) with family indexes from `firstIndex` on, so
    /// the population's own families do not change. Apple's reports hold their sales; the app stored nothing.
    mutating func lostOrders(count: Int, firstIndex: Int) -> [ReceiptFamily] {
        (0..<max(0, count)).map { makeFamily(index: firstIndex + $0, scenario: .activeNotRenewed) }
    }

    mutating func newPlan(_ product: SimProduct, start: Int64, sandbox: Bool) -> SubscriptionPlan {
        let n = nextSubscription
        nextSubscription += 1
        let otid = idBase + n * 10_000
        let web = 1_000_000_000_000_000 - idBase / 100 + n * 10_000 + 500_000_000_000
        return SubscriptionPlan(
            originalTransactionId: otid,
            webOrderLineItemBase: web,
            product: product,
            start: start,
            sandbox: sandbox
        )
    }

    /// Start of a history whose period `count` periods later begins at `periodStart`.
    func back(_ product: SimProduct, from periodStart: Int64, periods: Int, sandbox: Bool = false) -> Int64 {
        product.periodEnd(from: periodStart, count: -Int64(periods), sandbox: sandbox)
    }

    /// A current period that started a fraction (10-80%) of a period before the anchor.
    func currentPeriodStart(_ product: SimProduct, _ rng: inout SeededRandom) -> Int64 {
        if mix == .retail {
            // Anywhere in a whole period, so that renewals fall on every day (yearly ones over the year).
            let len = product.nominalLength(sandbox: false)
            return anchor - Int64(Double(len) * (0.02 + rng.unit() * 0.96))
        }
        let len = min(product.nominalLength(sandbox: false), 28 * SimTime.day)
        let f = 0.1 + rng.unit() * 0.7
        return anchor - Int64(Double(len) * f)
    }

    /// An active subscription with `periods` renewals before its current period.
    mutating func activePlan(_ product: SimProduct, periods: Int, _ rng: inout SeededRandom) -> SubscriptionPlan {
        let current = currentPeriodStart(product, &rng)
        return newPlan(product, start: back(product, from: current, periods: periods), sandbox: false)
    }

    /// A subscription whose last period ended at `lastExpiry` after `periods` earlier ones.
    mutating func endedPlan(_ product: SimProduct, lastExpiry: Int64, periods: Int) -> SubscriptionPlan {
        newPlan(product, start: back(product, from: lastExpiry, periods: periods + 1), sandbox: false)
    }

    /// The stored-receipt instant: shortly after the purchase of transaction `index` (clamped into range).
    func storedAt(_ plan: SubscriptionPlan, transactionsBack: Int, _ rng: inout SeededRandom) -> Int64 {
        let txns = plan.timeline(at: anchor).transactions.sorted { $0.purchase < $1.purchase }
        guard !txns.isEmpty else { return plan.start }
        let idx = max(0, txns.count - 1 - transactionsBack)
        let t = txns[idx]
        let limit = min(t.expires, t.cancellation ?? t.expires, anchor) - 1000
        return max(t.purchase, min(limit, t.purchase + rng.between(5 * SimTime.second, 2 * SimTime.hour)))
    }

    /// Family `index` of `scenario`, from its own random stream: the scenario's draws (grouped by theme in
    /// `PopulationGenerator+Scenarios`), then the stored receipt's issue sequence and the app's download date.
    private mutating func makeFamily(index: Int, scenario: Scenario) -> ReceiptFamily {
        var rng = SeededRandom(seed, 0xFA31, UInt64(index))
        var draft = FamilyDraft(stored: anchor, bundle: bundleId)
        switch scenario {
        case .activeNotRenewed, .silentRenewal, .familyShared, .multiGroup, .longHistory:
            drawActive(scenario, into: &draft, &rng)
        case .unauthenticatable, .deletedAccount, .malformedReceipt, .foreignSecretReceipt, .absurdDate, .nearInt64Max,
            .nulInText, .deletedAccountActive, .foreignApp, .sandbox:
            drawOddReceipt(scenario, into: &draft, &rng)
        case .autoRenewOffExpired, .expiredLongAgo, .appStoredLaterExpiry, .winBack, .priceIncreaseLapsed:
            drawLapsed(scenario, into: &draft, &rng)
        case .billingRetry, .gracePeriod:
            drawBillingProblem(scenario, into: &draft, &rng)
        case .refundedOther, .refundedAppIssue, .olderPeriodRefunded, .refundReversed:
            drawRefunded(scenario, into: &draft, &rng)
        case .refundThenResubscribe, .refundThenResubscribeRevokedRow, .midPeriodRefund, .midPeriodAutoRenewOff:
            drawYearlyMidPeriod(scenario, into: &draft, &rng)
        case .upgraded, .upgradeWithoutCancellation, .pendingDowngrade, .pendingCrossgrade:
            drawPlanChange(scenario, into: &draft, &rng)
        case .freeTrial, .introOffer:
            drawOffer(scenario, into: &draft, &rng)
        }
        let firstStart = draft.plans.map(\.start).min() ?? anchor
        return ReceiptFamily(
            index: index,
            scenario: scenario,
            userId: "user-" + String(100_000 + index),
            bundleId: draft.bundle,
            appBundleId: bundleId,
            sandbox: draft.sandbox,
            subscriptions: draft.plans,
            storedReceiptAt: draft.stored,
            storedIssueSequence: UInt32(rng.int(1...40)),
            bytesPerTransaction: draft.bytesPerTxn,
            fixedStatus: draft.fixedStatus,
            malformedStoredReceipt: draft.malformed,
            appStoredExpiry: draft.appStoredExpiry,
            implausibleValue: draft.implausible,
            priorRunAt: draft.priorRunAt,
            appDownloadedAt: firstStart - rng.between(0, 30 * SimTime.day)
        )
    }
}
