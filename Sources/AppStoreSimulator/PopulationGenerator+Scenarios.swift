/// The scenarios of `PopulationGenerator`, grouped by theme: each draws one family's subscriptions and oddities
/// from the family's random stream into its `FamilyDraft`. The order of the draws is part of the population:
/// drawing in another order changes the families, and the tests' and the demo's expectations with them.
extension PopulationGenerator {
    /// Subscribers renewing as usual: `active_not_renewed`, `silent_renewal`, `family_shared`, `multi_group` and
    /// `long_history`.
    mutating func drawActive(_ scenario: Scenario, into draft: inout FamilyDraft, _ rng: inout SeededRandom) {
        let day = SimTime.day
        switch scenario {
        case .activeNotRenewed:
            let product = catalog.pick(&rng)
            let n = product.period == .year ? rng.int(0...1) : rng.int(0...3)
            var plan = activePlan(product, periods: n, &rng)
            if rng.chance(0.2), let current = plan.timeline(at: anchor).transactions.last {
                plan.autoRenewOffAt = current.purchase + (anchor - current.purchase) / 2
            }
            draft.single(plan, storedAt: storedAt(plan, transactionsBack: 0, &rng))
        case .silentRenewal, .familyShared:
            var (plan, at) = silentPlan(catalog.pick(&rng), &rng)
            if scenario == .familyShared { plan.familyShared = true }
            draft.single(plan, storedAt: at)
        case .multiGroup:
            let pro = rng.chance(0.6) ? catalog.proMonthly : catalog.proYearly
            let (first, firstAt) = silentPlan(pro, &rng)
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
            draft.plans = [first, second]
            draft.stored = max(firstAt, secondAt)
        case .longHistory:
            let product = catalog.newsWeekly
            let plan = activePlan(product, periods: rng.int(150...170), &rng)
            draft.single(plan, storedAt: storedAt(plan, transactionsBack: rng.int(2...5), &rng))
            draft.bytesPerTxn = ReceiptFamily.longHistoryBytesPerTransaction
        default:
            preconditionFailure("\(scenario) is not an active scenario")
        }
    }

    /// Receipts Apple refuses or answers oddly: `unauthenticatable`, `deleted_account`, `malformed_receipt`,
    /// `foreign_secret_receipt`, `absurd_date`, `near_int64_max`, `nul_in_text`, `deleted_account_active`,
    /// `foreign_app` and `sandbox`.
    mutating func drawOddReceipt(_ scenario: Scenario, into draft: inout FamilyDraft, _ rng: inout SeededRandom) {
        let day = SimTime.day
        switch scenario {
        case .unauthenticatable, .deletedAccount, .malformedReceipt:
            let (plan, at) = silentPlan(catalog.pick(&rng), &rng)
            draft.single(plan, storedAt: at)
            if scenario == .unauthenticatable { draft.fixedStatus = 21003 }
            if scenario == .deletedAccount { draft.fixedStatus = 21010 }
            if scenario == .malformedReceipt { draft.malformed = true }
        case .foreignSecretReceipt, .absurdDate, .nearInt64Max, .nulInText:
            let (plan, at) = silentPlan(catalog.pick(&rng), &rng)
            draft.single(plan, storedAt: at)
            draft.implausible = implausibleValue(scenario, plan: plan, &rng)
            if scenario == .foreignSecretReceipt { draft.fixedStatus = 21004 }
        case .deletedAccountActive:
            let product = catalog.pick(&rng)
            let plan = activePlan(product, periods: rng.int(1...4), &rng)
            draft.single(plan, storedAt: storedAt(plan, transactionsBack: 0, &rng))
            draft.fixedStatus = 21010
        case .foreignApp:
            draft.bundle = foreignBundleId
            let (plan, at) = silentPlan(foreignCatalog.pick(&rng), &rng)
            draft.single(plan, storedAt: at)
        case .sandbox:
            draft.sandbox = true
            let product = catalog.pickShort(&rng)
            let start =
                rng.chance(0.5)
                ? anchor - rng.between(10 * SimTime.second, 150 * SimTime.second)
                : anchor - rng.between(SimTime.hour, 20 * day)
            let plan = newPlan(product, start: start, sandbox: true)
            draft.single(plan, storedAt: min(anchor - 1000, start + 2 * SimTime.second))
        default:
            preconditionFailure("\(scenario) is not an odd-receipt scenario")
        }
    }

    /// Subscriptions that lapsed by the anchor: `auto_renew_off_expired`, `expired_long_ago`,
    /// `app_stored_later_expiry`, `win_back` and `price_increase_lapsed`.
    mutating func drawLapsed(_ scenario: Scenario, into draft: inout FamilyDraft, _ rng: inout SeededRandom) {
        let day = SimTime.day
        switch scenario {
        case .autoRenewOffExpired, .expiredLongAgo:
            let product = scenario == .expiredLongAgo ? catalog.pickShort(&rng) : catalog.pick(&rng)
            let lastExpiry =
                scenario == .expiredLongAgo
                ? anchor - rng.between(31 * day, 58 * day) : anchor - rng.between(day, 20 * day)
            var plan = endedPlan(product, lastExpiry: lastExpiry, periods: rng.int(1...5))
            let lastStart = back(product, from: lastExpiry, periods: 1)
            plan.autoRenewOffAt = lastStart + Int64(Double(lastExpiry - lastStart) * (0.3 + rng.unit() * 0.6))
            draft.single(plan, storedAt: storedAt(plan, transactionsBack: rng.int(0...1), &rng))
        case .appStoredLaterExpiry:
            let product = catalog.pick(&rng)
            let lastExpiry = anchor - rng.between(day, 20 * day)
            var plan = endedPlan(product, lastExpiry: lastExpiry, periods: rng.int(1...4))
            let lastStart = back(product, from: lastExpiry, periods: 1)
            plan.autoRenewOffAt = lastStart + Int64(Double(lastExpiry - lastStart) * (0.3 + rng.unit() * 0.6))
            draft.single(plan, storedAt: storedAt(plan, transactionsBack: 0, &rng))
            // A year too late, or a few weeks past the anchor: the row looks active, Apple says lapsed.
            draft.appStoredExpiry =
                rng.chance(0.5)
                ? SimTime.addMonths(lastExpiry, 12) : anchor + rng.between(2 * day, 60 * day)
        case .winBack, .priceIncreaseLapsed:
            let (plan, at) = lapsedPlan(scenario, &rng)
            draft.single(plan, storedAt: at)
        default:
            preconditionFailure("\(scenario) is not a lapsed scenario")
        }
    }

    /// Renewals that failed to bill: `billing_retry` (still retrying, any grace over) and `grace_period` (in its
    /// grace period at the anchor).
    mutating func drawBillingProblem(_ scenario: Scenario, into draft: inout FamilyDraft, _ rng: inout SeededRandom) {
        let day = SimTime.day
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
        draft.single(plan, storedAt: storedAt(plan, transactionsBack: rng.int(0...2), &rng))
    }

    /// Refunds of a period: `refunded_reason_0`, `refunded_reason_1` (the current period), `older_period_refunded`
    /// and `refund_reversed` (refunded, seen revoked by a previous night's run, reversed since).
    mutating func drawRefunded(_ scenario: Scenario, into draft: inout FamilyDraft, _ rng: inout SeededRandom) {
        let day = SimTime.day
        switch scenario {
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
            draft.single(plan, storedAt: storedAt(plan, transactionsBack: rng.int(0...1), &rng))
        case .olderPeriodRefunded:
            let product = catalog.pickShort(&rng)
            var plan = activePlan(product, periods: rng.int(3...8), &rng)
            let txns = plan.timeline(at: anchor).transactions
            let j = rng.int(0...max(0, txns.count - 3))
            let t = txns[j]
            plan.refunds = [
                .init(transactionIndex: j, at: t.purchase + (t.expires - t.purchase) / 2, reason: rng.int(0...1))
            ]
            draft.single(plan, storedAt: storedAt(plan, transactionsBack: 0, &rng))
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
            draft.single(plan, storedAt: storedAt(plan, transactionsBack: 0, &rng))
            draft.priorRunAt = seenAt
        default:
            preconditionFailure("\(scenario) is not a refund scenario")
        }
    }

    /// A yearly refunded or turned off months before it would expire: `refund_then_resubscribe` (and its
    /// `_revoked_row`), `mid_period_refund` and `mid_period_auto_renew_off`.
    mutating func drawYearlyMidPeriod(_ scenario: Scenario, into draft: inout FamilyDraft, _ rng: inout SeededRandom) {
        let day = SimTime.day
        let yearly = catalog.proYearly
        switch scenario {
        case .refundThenResubscribe, .refundThenResubscribeRevokedRow:
            // A yearly refunded (it would still run for months), then a paid monthly in the same group.
            let revokedRow = scenario == .refundThenResubscribeRevokedRow
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
            let after = plan.timeline(at: anchor).transactions.count
            draft.single(plan, storedAt: storedAt(plan, transactionsBack: after - 1 - n, &rng))
            // The previous night ran between the refund and the new purchase, and found the row revoked.
            if revokedRow { draft.priorRunAt = refundAt + (resubscribeAt - refundAt) / 2 }
        case .midPeriodRefund, .midPeriodAutoRenewOff:
            // The window cannot see these: the row was verified last night, its expiry is months away.
            let yearStart = anchor - rng.between(35 * day, 120 * day)
            let n = rng.int(0...1)
            var plan = newPlan(yearly, start: back(yearly, from: yearStart, periods: n), sandbox: false)
            let eventAt = anchor - rng.between(6 * SimTime.hour, 5 * day)
            if scenario == .midPeriodRefund {
                plan.refunds = [.init(transactionIndex: n, at: eventAt, reason: rng.int(0...1))]
            }
            plan.autoRenewOffAt = eventAt
            draft.single(plan, storedAt: storedAt(plan, transactionsBack: 0, &rng))
            draft.priorRunAt = eventAt - rng.between(SimTime.hour, 20 * SimTime.hour)
        default:
            preconditionFailure("\(scenario) is not a mid-period scenario of a yearly")
        }
    }

    /// Changes of product: `upgraded`, `upgrade_without_cancellation` (both before the anchor), `pending_downgrade`
    /// and `pending_crossgrade` (decided, due at the next renewal).
    mutating func drawPlanChange(_ scenario: Scenario, into draft: inout FamilyDraft, _ rng: inout SeededRandom) {
        let day = SimTime.day
        switch scenario {
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
            draft.single(plan, storedAt: storedAfterUpgrade(plan, at: upgradeAt, &rng))
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
            draft.single(plan, storedAt: storedAfterUpgrade(plan, at: upgradeAt, &rng))
        case .pendingDowngrade, .pendingCrossgrade:
            let from = scenario == .pendingDowngrade ? catalog.proPlusMonthly : catalog.proMonthly
            let to = scenario == .pendingDowngrade ? catalog.proMonthly : catalog.proYearly
            var plan = activePlan(from, periods: rng.int(1...4), &rng)
            if let current = plan.timeline(at: anchor).transactions.last {
                plan.planChange = .init(decidedAt: current.purchase + (anchor - current.purchase) / 2, to: to)
            }
            draft.single(plan, storedAt: storedAt(plan, transactionsBack: 0, &rng))
        default:
            preconditionFailure("\(scenario) is not a plan-change scenario")
        }
    }

    /// The stored-receipt instant of an upgraded plan: shortly after the last purchase before the upgrade, so the
    /// stored receipt lacks every transaction from the upgrade on.
    func storedAfterUpgrade(_ plan: SubscriptionPlan, at upgradeAt: Int64, _ rng: inout SeededRandom) -> Int64 {
        let before = plan.timeline(at: upgradeAt - 1).transactions.count
        let after = plan.timeline(at: anchor).transactions.count
        return storedAt(plan, transactionsBack: after - before, &rng)
    }

    /// Introductory offers: `free_trial` (a trial running at the anchor, or converted a few periods ago) and
    /// `intro_offer` (discounted first periods, sometimes through an offer code).
    mutating func drawOffer(_ scenario: Scenario, into draft: inout FamilyDraft, _ rng: inout SeededRandom) {
        let day = SimTime.day
        switch scenario {
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
            draft.single(plan, storedAt: storedAt(plan, transactionsBack: 99, &rng))
        case .introOffer:
            let product = catalog.pickShort(&rng)
            var plan = activePlan(product, periods: rng.int(1...6), &rng)
            plan.introCount = rng.int(1...3)
            if rng.chance(0.3) { plan.offerCodeRefName = rng.chance(0.5) ? "WINTER_PROMO" : "PARTNER_3M_HALF" }
            draft.single(plan, storedAt: storedAt(plan, transactionsBack: 99, &rng))
        default:
            preconditionFailure("\(scenario) is not an offer scenario")
        }
    }

    /// An ordinary history whose receipt the app last stored one to four renewals ago: the plan, and when.
    private mutating func silentPlan(_ product: SimProduct, _ rng: inout SeededRandom) -> (SubscriptionPlan, Int64) {
        let n = silentPeriods(product, &rng)
        let plan = activePlan(product, periods: n, &rng)
        let transactionsBack = rng.int(1...min(n, 4))
        return (plan, storedAt(plan, transactionsBack: transactionsBack, &rng))
    }

    /// How many periods an ordinary history has had before its current one.
    private func silentPeriods(_ product: SimProduct, _ rng: inout SeededRandom) -> Int {
        switch product.period {
        case .week: return rng.int(3...10)
        case .month: return rng.int(2...8)
        case .year: return rng.int(1...3)
        }
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
