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

    private mutating func newPlan(_ product: SimProduct, start: Int64, sandbox: Bool) -> SubscriptionPlan {
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
    private func back(_ product: SimProduct, from periodStart: Int64, periods: Int, sandbox: Bool = false) -> Int64 {
        product.periodEnd(from: periodStart, count: -Int64(periods), sandbox: sandbox)
    }

    /// A current period that started a fraction (10-80%) of a period before the anchor.
    private func currentPeriodStart(_ product: SimProduct, _ rng: inout SeededRandom) -> Int64 {
        if mix == .retail {
            // Anywhere in a whole period, so that renewals fall on every day (yearly ones over the year).
            let len = product.nominalLength(sandbox: false)
            return anchor - Int64(Double(len) * (0.02 + rng.unit() * 0.96))
        }
        let len = min(product.nominalLength(sandbox: false), 28 * SimTime.day)
        let f = 0.1 + rng.unit() * 0.7
        return anchor - Int64(Double(len) * f)
    }

    private func silentPeriods(_ product: SimProduct, _ rng: inout SeededRandom) -> Int {
        switch product.period {
        case .week: return rng.int(3...10)
        case .month: return rng.int(2...8)
        case .year: return rng.int(1...3)
        }
    }

    /// An active subscription with `periods` renewals before its current period.
    private mutating func activePlan(_ product: SimProduct, periods: Int, _ rng: inout SeededRandom) -> SubscriptionPlan
    {
        let current = currentPeriodStart(product, &rng)
        return newPlan(product, start: back(product, from: current, periods: periods), sandbox: false)
    }

    /// A subscription whose last period ended at `lastExpiry` after `periods` earlier ones.
    private mutating func endedPlan(_ product: SimProduct, lastExpiry: Int64, periods: Int) -> SubscriptionPlan {
        newPlan(product, start: back(product, from: lastExpiry, periods: periods + 1), sandbox: false)
    }

    /// The stored-receipt instant: shortly after the purchase of transaction `index` (clamped into range).
    private func storedAt(_ plan: SubscriptionPlan, transactionsBack: Int, _ rng: inout SeededRandom) -> Int64 {
        let txns = plan.timeline(at: anchor).transactions.sorted { $0.purchase < $1.purchase }
        guard !txns.isEmpty else { return plan.start }
        let idx = max(0, txns.count - 1 - transactionsBack)
        let t = txns[idx]
        let limit = min(t.expires, t.cancellation ?? t.expires, anchor) - 1000
        return max(t.purchase, min(limit, t.purchase + rng.between(5 * SimTime.second, 2 * SimTime.hour)))
    }

    private mutating func makeFamily(index: Int, scenario: Scenario) -> ReceiptFamily {
        var rng = SeededRandom(seed, 0xFA31, UInt64(index))
        let day = SimTime.day
        var plans: [SubscriptionPlan] = []
        var stored: Int64 = anchor
        var sandbox = false
        var bundle = bundleId
        var bytesPerTxn = ReceiptFamily.defaultBytesPerTransaction
        var fixedStatus: Int?
        var malformed = false
        var appStoredExpiry: Int64?
        var implausible: ImplausibleValue?
        var priorRunAt: Int64?

        func silent(
            _ gen: inout PopulationGenerator,
            _ product: SimProduct,
            _ rng: inout SeededRandom
        ) -> (SubscriptionPlan, Int64) {
            let n = gen.silentPeriods(product, &rng)
            let plan = gen.activePlan(product, periods: n, &rng)
            let back = rng.int(1...min(n, 4))
            return (plan, gen.storedAt(plan, transactionsBack: back, &rng))
        }

        switch scenario {
        case .activeNotRenewed:
            let product = catalog.pick(&rng)
            let n = product.period == .year ? rng.int(0...1) : rng.int(0...3)
            var plan = activePlan(product, periods: n, &rng)
            if rng.chance(0.2), let current = plan.timeline(at: anchor).transactions.last {
                plan.autoRenewOffAt = current.purchase + (anchor - current.purchase) / 2
            }
            stored = storedAt(plan, transactionsBack: 0, &rng)
            plans = [plan]
        case .silentRenewal, .unauthenticatable, .deletedAccount, .malformedReceipt, .familyShared:
            var (plan, at) = silent(&self, catalog.pick(&rng), &rng)
            if scenario == .familyShared { plan.familyShared = true }
            plans = [plan]
            stored = at
            if scenario == .unauthenticatable { fixedStatus = 21003 }
            if scenario == .deletedAccount { fixedStatus = 21010 }
            if scenario == .malformedReceipt { malformed = true }
        case .foreignSecretReceipt, .absurdDate, .nearInt64Max, .nulInText:
            let (plan, at) = silent(&self, catalog.pick(&rng), &rng)
            plans = [plan]
            stored = at
            implausible = implausibleValue(scenario, plan: plan, &rng)
            if scenario == .foreignSecretReceipt { fixedStatus = 21004 }
        case .deletedAccountActive:
            let product = catalog.pick(&rng)
            let plan = activePlan(product, periods: rng.int(1...4), &rng)
            plans = [plan]
            stored = storedAt(plan, transactionsBack: 0, &rng)
            fixedStatus = 21010
        case .foreignApp:
            bundle = foreignBundleId
            let (plan, at) = silent(&self, foreignCatalog.pick(&rng), &rng)
            plans = [plan]
            stored = at
        case .autoRenewOffExpired, .expiredLongAgo:
            let product = scenario == .expiredLongAgo ? catalog.pickShort(&rng) : catalog.pick(&rng)
            let lastExpiry =
                scenario == .expiredLongAgo
                ? anchor - rng.between(31 * day, 58 * day) : anchor - rng.between(day, 20 * day)
            var plan = endedPlan(product, lastExpiry: lastExpiry, periods: rng.int(1...5))
            let lastStart = back(product, from: lastExpiry, periods: 1)
            plan.autoRenewOffAt = lastStart + Int64(Double(lastExpiry - lastStart) * (0.3 + rng.unit() * 0.6))
            plans = [plan]
            stored = storedAt(plan, transactionsBack: rng.int(0...1), &rng)
        case .billingRetry, .gracePeriod:
            let product = catalog.pick(&rng)
            let graceDays: Int64 = product.period == .week ? 6 : 16
            let lastExpiry =
                scenario == .gracePeriod
                ? anchor - rng.between(6 * SimTime.hour, (graceDays - 1) * day)
                : anchor - rng.between(max(day, (graceDays + 1) * day), 50 * day)
            var plan = endedPlan(product, lastExpiry: lastExpiry, periods: rng.int(1...6))
            plan.billingFailsFrom = lastExpiry - SimTime.hour
            // Some billing-retry apps have grace enabled too, but the grace has run out by the anchor.
            if scenario == .gracePeriod || rng.chance(0.5) { plan.graceDays = graceDays }
            plans = [plan]
            stored = storedAt(plan, transactionsBack: rng.int(0...2), &rng)
        case .refundedOther, .refundedAppIssue:
            let product = catalog.pick(&rng)
            let len = min(product.nominalLength(sandbox: false), 28 * day)
            let sinceStart = rng.between(2 * day, len * 4 / 5)
            let current = anchor - sinceStart
            let n = rng.chance(0.3) ? 0 : rng.int(1...4)
            var plan = newPlan(product, start: back(product, from: current, periods: n), sandbox: false)
            let at = current + rng.between(12 * SimTime.hour, sinceStart - 12 * SimTime.hour)
            plan.refunds = [.init(transactionIndex: n, at: at, reason: scenario == .refundedAppIssue ? 1 : 0)]
            plan.autoRenewOffAt = at
            stored = storedAt(plan, transactionsBack: rng.int(0...1), &rng)
            plans = [plan]
        case .olderPeriodRefunded:
            let product = catalog.pickShort(&rng)
            var plan = activePlan(product, periods: rng.int(3...8), &rng)
            let txns = plan.timeline(at: anchor).transactions
            let j = rng.int(0...max(0, txns.count - 3))
            let t = txns[j]
            plan.refunds = [
                .init(transactionIndex: j, at: t.purchase + (t.expires - t.purchase) / 2, reason: rng.int(0...1))
            ]
            plans = [plan]
            stored = storedAt(plan, transactionsBack: 0, &rng)
        case .upgraded:
            let plusPeriods = Int64(rng.int(0...2))
            let upgradeAt = SimTime.addMonths(anchor, -plusPeriods) - rng.between(3 * day, 24 * day)
            let lastProStart = upgradeAt - rng.between(2 * day, 22 * day)
            var plan = newPlan(
                catalog.proMonthly,
                start: back(catalog.proMonthly, from: lastProStart, periods: rng.int(0...4)),
                sandbox: false
            )
            plan.upgrade = .init(at: upgradeAt, to: catalog.proPlusMonthly)
            plans = [plan]
            let before = plan.timeline(at: upgradeAt - 1)
            stored = storedAt(
                plan,
                transactionsBack: plan.timeline(at: anchor).transactions.count - before.transactions.count,
                &rng
            )
        case .upgradeWithoutCancellation:
            // Yearly (level 2) upgraded to plus monthly (level 1): the yearly would run for months more,
            // so a client that keeps an `is_upgraded` transaction without a cancellation date is caught.
            let yearly = catalog.proYearly
            let yearStart = anchor - rng.between(60 * day, 300 * day)
            var plan = newPlan(yearly, start: back(yearly, from: yearStart, periods: rng.int(0...1)), sandbox: false)
            let upgradeAt: Int64
            if rng.chance(0.3) {
                // The customer turned auto-renew off soon after: the plus monthly lapsed before the anchor.
                upgradeAt = yearStart + rng.between(day, anchor - yearStart - 35 * day)
                plan.autoRenewOffAt = upgradeAt + rng.between(SimTime.hour, 10 * day)
            } else {
                upgradeAt = yearStart + rng.between(day, anchor - yearStart - 2 * day)
            }
            plan.upgrade = .init(at: upgradeAt, to: catalog.proPlusMonthly, carriesCancellationDate: false)
            plans = [plan]
            let before = plan.timeline(at: upgradeAt - 1)
            let after = plan.timeline(at: anchor).transactions.count
            stored = storedAt(plan, transactionsBack: after - before.transactions.count, &rng)
        case .refundThenResubscribe, .refundThenResubscribeRevokedRow:
            // A yearly refunded (it would still run for months), then a paid monthly in the same group.
            let revokedRow = scenario == .refundThenResubscribeRevokedRow
            let yearly = catalog.proYearly
            let resubscribeAt = anchor - (revokedRow ? rng.between(3 * day, 20 * day) : rng.between(3 * day, 50 * day))
            let refundAt = resubscribeAt - (revokedRow ? rng.between(2 * day, 15 * day) : rng.between(day, 20 * day))
            let yearStart = refundAt - rng.between(2 * day, 60 * day)
            // One earlier yearly period sometimes; never for the revoked row, whose revoked expiry (the
            // refund) must stay within the nightly window.
            let drawn = rng.int(0...1)
            let n = revokedRow ? 0 : drawn
            var plan = newPlan(yearly, start: back(yearly, from: yearStart, periods: n), sandbox: false)
            plan.refunds = [.init(transactionIndex: n, at: refundAt, reason: rng.int(0...1))]
            plan.resubscription = .init(at: resubscribeAt, to: catalog.proMonthly)
            plans = [plan]
            let after = plan.timeline(at: anchor).transactions.count
            stored = storedAt(plan, transactionsBack: after - 1 - n, &rng)
            // The previous night ran between the refund and the new purchase, and found the row revoked.
            if revokedRow { priorRunAt = refundAt + (resubscribeAt - refundAt) / 2 }
        case .midPeriodRefund, .midPeriodAutoRenewOff:
            // The window cannot see these: the row was verified last night, its expiry is months away.
            let yearly = catalog.proYearly
            let yearStart = anchor - rng.between(35 * day, 120 * day)
            let n = rng.int(0...1)
            var plan = newPlan(yearly, start: back(yearly, from: yearStart, periods: n), sandbox: false)
            let eventAt = anchor - rng.between(6 * SimTime.hour, 5 * day)
            if scenario == .midPeriodRefund {
                plan.refunds = [.init(transactionIndex: n, at: eventAt, reason: rng.int(0...1))]
            }
            plan.autoRenewOffAt = eventAt
            plans = [plan]
            stored = storedAt(plan, transactionsBack: 0, &rng)
            priorRunAt = eventAt - rng.between(SimTime.hour, 20 * SimTime.hour)
        case .refundReversed:
            // Refunded 2-5 days ago, seen revoked by the run of the night after, reversed since.
            let product = catalog.pickShort(&rng)
            let refundAt = anchor - rng.between(2 * day + 12 * SimTime.hour, 5 * day)
            let seenAt = refundAt + rng.between(6 * SimTime.hour, 20 * SimTime.hour)
            let reversedAt = seenAt + rng.between(2 * SimTime.hour, 20 * SimTime.hour)
            let len = min(product.nominalLength(sandbox: false), 28 * day)
            let current = refundAt - rng.between(day, max(2 * day, len / 3))
            let n = rng.int(1...3)
            var plan = newPlan(product, start: back(product, from: current, periods: n), sandbox: false)
            let index = plan.timeline(at: refundAt).transactions.count - 1
            plan.refunds = [
                .init(transactionIndex: index, at: refundAt, reason: rng.int(0...1), reversedAt: reversedAt)
            ]
            plans = [plan]
            stored = storedAt(plan, transactionsBack: 0, &rng)
            priorRunAt = seenAt
        case .appStoredLaterExpiry:
            let product = catalog.pick(&rng)
            let lastExpiry = anchor - rng.between(day, 20 * day)
            var plan = endedPlan(product, lastExpiry: lastExpiry, periods: rng.int(1...4))
            let lastStart = back(product, from: lastExpiry, periods: 1)
            plan.autoRenewOffAt = lastStart + Int64(Double(lastExpiry - lastStart) * (0.3 + rng.unit() * 0.6))
            plans = [plan]
            stored = storedAt(plan, transactionsBack: 0, &rng)
            // A year too late, or a few weeks past the anchor: the row looks active, Apple says lapsed.
            appStoredExpiry =
                rng.chance(0.5)
                ? SimTime.addMonths(lastExpiry, 12) : anchor + rng.between(2 * day, 60 * day)
        case .pendingDowngrade, .pendingCrossgrade:
            let from = scenario == .pendingDowngrade ? catalog.proPlusMonthly : catalog.proMonthly
            let to = scenario == .pendingDowngrade ? catalog.proMonthly : catalog.proYearly
            var plan = activePlan(from, periods: rng.int(1...4), &rng)
            if let current = plan.timeline(at: anchor).transactions.last {
                plan.planChange = .init(decidedAt: current.purchase + (anchor - current.purchase) / 2, to: to)
            }
            plans = [plan]
            stored = storedAt(plan, transactionsBack: 0, &rng)
        case .freeTrial:
            let product = catalog.pickShort(&rng)
            var plan: SubscriptionPlan
            if rng.chance(0.5) {
                plan = newPlan(product, start: anchor - rng.between(12 * SimTime.hour, 6 * day), sandbox: false)
            } else {
                let current = currentPeriodStart(product, &rng)
                plan = newPlan(
                    product,
                    start: back(product, from: current, periods: rng.int(0...3)) - 7 * day,
                    sandbox: false
                )
            }
            plan.trial = true
            plans = [plan]
            stored = storedAt(plan, transactionsBack: 99, &rng)
        case .introOffer:
            let product = catalog.pickShort(&rng)
            var plan = activePlan(product, periods: rng.int(1...6), &rng)
            plan.introCount = rng.int(1...3)
            if rng.chance(0.3) { plan.offerCodeRefName = rng.chance(0.5) ? "WINTER_PROMO" : "PARTNER_3M_HALF" }
            plans = [plan]
            stored = storedAt(plan, transactionsBack: 99, &rng)
        case .sandbox:
            sandbox = true
            let product = catalog.pickShort(&rng)
            let start =
                rng.chance(0.5)
                ? anchor - rng.between(10 * SimTime.second, 150 * SimTime.second)
                : anchor - rng.between(SimTime.hour, 20 * day)
            let plan = newPlan(product, start: start, sandbox: true)
            plans = [plan]
            stored = min(anchor - 1000, start + 2 * SimTime.second)
        case .multiGroup:
            let pro = rng.chance(0.6) ? catalog.proMonthly : catalog.proYearly
            let (first, firstAt) = silent(&self, pro, &rng)
            let news = rng.chance(0.5) ? catalog.newsWeekly : catalog.newsMonthly
            var second: SubscriptionPlan
            if rng.chance(0.6) {
                second = activePlan(news, periods: rng.int(0...3), &rng)
            } else {
                let lastExpiry = anchor - rng.between(day, 20 * day)
                second = endedPlan(news, lastExpiry: lastExpiry, periods: rng.int(1...4))
                second.autoRenewOffAt = lastExpiry - 12 * SimTime.hour
            }
            let secondAt = storedAt(second, transactionsBack: 0, &rng)
            plans = [first, second]
            stored = max(firstAt, secondAt)
        case .winBack, .priceIncreaseLapsed:
            let (plan, at) = lapsedPlan(scenario, &rng)
            plans = [plan]
            stored = at
        case .longHistory:
            let product = catalog.newsWeekly
            let plan = activePlan(product, periods: rng.int(150...170), &rng)
            plans = [plan]
            stored = storedAt(plan, transactionsBack: rng.int(2...5), &rng)
            bytesPerTxn = ReceiptFamily.longHistoryBytesPerTransaction
        }
        let firstStart = plans.map(\.start).min() ?? anchor
        return ReceiptFamily(
            index: index,
            scenario: scenario,
            userId: "user-" + String(100_000 + index),
            bundleId: bundle,
            appBundleId: bundleId,
            sandbox: sandbox,
            subscriptions: plans,
            storedReceiptAt: stored,
            storedIssueSequence: UInt32(rng.int(1...40)),
            bytesPerTransaction: bytesPerTxn,
            fixedStatus: fixedStatus,
            malformedStoredReceipt: malformed,
            appStoredExpiry: appStoredExpiry,
            implausibleValue: implausible,
            priorRunAt: priorRunAt,
            appDownloadedAt: firstStart - rng.between(0, 30 * day)
        )
    }

    /// A `win_back` plan (lapsed 40 to 120 days before the anchor, back with a win-back offer 2 to 25 days before
    /// it) or a `price_increase_lapsed` one (expired 1 to 20 days before the anchor at the first renewal at a new
    /// price the customer never consented to, announced about a month before), and its stored-receipt instant.
    private mutating func lapsedPlan(_ scenario: Scenario, _ rng: inout SeededRandom) -> (SubscriptionPlan, Int64) {
        let day = SimTime.day
        let product = catalog.pickShort(&rng)
        if scenario == .winBack {
            let lapsedAt = anchor - rng.between(40 * day, 120 * day)
            var plan = endedPlan(product, lastExpiry: lapsedAt, periods: rng.int(1...5))
            let lastStart = back(product, from: lapsedAt, periods: 1)
            plan.autoRenewOffAt = lastStart + (lapsedAt - lastStart) / 2
            let count = rng.int(1...2)
            plan.winBack = .init(
                at: anchor - rng.between(2 * day, 25 * day),
                to: product,
                offerIdentifier: "WINBACK_HALF_\(count)",
                count: count
            )
            return (plan, storedAt(plan, transactionsBack: 0, &rng))
        }
        let lastExpiry = anchor - rng.between(day, 20 * day)
        var plan = endedPlan(product, lastExpiry: lastExpiry, periods: rng.int(2...5))
        plan.priceIncrease = .init(
            announcedAt: lastExpiry - rng.between(25 * day, 35 * day),
            effectiveAt: lastExpiry,
            consentedAt: nil
        )
        return (plan, storedAt(plan, transactionsBack: rng.int(0...1), &rng))
    }

    /// The out-of-bounds value of an `absurd_date`, `near_int64_max` or `nul_in_text` family (nil otherwise).
    private func implausibleValue(
        _ scenario: Scenario,
        plan: SubscriptionPlan,
        _ rng: inout SeededRandom
    )
        -> ImplausibleValue?
    {
        switch scenario {
        case .absurdDate:
            return .date(field: "expires_date", milliseconds: ImplausibleValue.absurdMilliseconds)
        case .nearInt64Max:
            let fields = ["expires_date", "purchase_date", "original_purchase_date"]
            return .date(field: fields[rng.int(0...2)], milliseconds: ImplausibleValue.nearInt64MaxMilliseconds)
        case .nulInText:
            if rng.chance(0.5) {
                let product = plan.timeline(at: anchor).transactions.last?.product ?? plan.product
                return .text(field: "product_id", value: product.productId + "\u{0}")
            }
            return .text(field: "offer_code_ref_name", value: "WINTER\u{0}PROMO")
        default:
            return nil
        }
    }
}
