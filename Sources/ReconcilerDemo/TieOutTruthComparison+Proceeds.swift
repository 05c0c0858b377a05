import AppleReports
import Reconciler

/// The checks of the causes that move proceeds (docs/tie-out.md, "The demo"), each against the simulator's sales
/// truth, which knows every event's tax, Apple's commission rate and settlement day:
///
/// - **tax**: per country and currency, the daily view's `tax` money is what the storefront's tax took from the
///   ledger's events (their price at Apple's true commission rate less Apple's proceeds), to within a minor unit per
///   event whose amount at that rate is exactly halfway between two minor units (rounding), and there is none in a
///   country without a tax;
/// - **commission tier**: per currency, the daily view's `commission_tier` money is the ledger's estimates of the
///   paired events less those events' price at Apple's true rate (the 85% "Rate After One Year" where the truth
///   says so), to within the same rounding;
/// - **settlement timing**: per currency, the monthly view's `timing` money is the proceeds of the events sold in a
///   compared fiscal month that Apple settled after it, less those sold before it that Apple settled in it;
/// - **not planted**: the retail world pays every proceeds in the customer's currency, books a refund on the same
///   Pacific day on both sides and reverses none, so there is no `exchange_rate`, `refund_other_period` or
///   `refund_reversed` row and no `timing` in the daily view.
extension TieOutTruthComparison {
    func tax() -> Check {
        var expected: [String: Int64] = [:]
        var tolerance: [String: Int64] = [:]
        for event in inWindow where event.isLedgerMoney && (event.taxPercent ?? 0) > 0 {
            let key = event.country + " " + event.currency
            let (atApple, slack) = Self.atAppleRate(event)
            expected[key, default: 0] += atApple - (event.proceeds ?? 0)
            tolerance[key, default: 0] += slack
        }
        let actual = sums(view: .daily, measure: .proceeds, cause: .tax, by: { $0.country + " " + $0.currency }) {
            $0.difference
        }
        let holds = Set(expected.keys).union(actual.keys).allSatisfy {
            abs((expected[$0] ?? 0) - (actual[$0] ?? 0)) <= (tolerance[$0] ?? 0)
        }
        return Check(
            name: "tax = what each taxed storefront took (per country and currency)",
            expected: Self.text(expected),
            actual: Self.text(actual),
            holds: holds
        )
    }

    func commissionTier() -> Check {
        var estimates: [String: Int64] = [:]
        var tolerance: [String: Int64] = [:]
        for row in result.rows where row.key.view == .daily && row.key.measure == .proceeds && row.key.cause == .matched
        {
            estimates[row.key.currency, default: 0] += row.ledgerAmount
        }
        var expected = estimates
        for event in inWindow where event.isLedgerMoney {
            let (atApple, slack) = Self.atAppleRate(event)
            expected[event.currency, default: 0] -= atApple
            tolerance[event.currency, default: 0] += slack
        }
        let actual = sums(view: .daily, measure: .proceeds, cause: .commissionTier, \.difference)
        let holds = Set(expected.keys).union(actual.keys).allSatisfy {
            abs((expected[$0] ?? 0) - (actual[$0] ?? 0)) <= (tolerance[$0] ?? 0)
        }
        return Check(
            name: "commission tier = the ledger's estimates less the price at Apple's true rate (per currency)",
            expected: Self.text(expected),
            actual: Self.text(actual),
            holds: holds
        )
    }

    func settlementTiming() -> Check {
        let compared = Set(result.fiscalMonthsCompared.map(\.name))
        var expected: [String: Int64] = [:]
        for event in events where event.kind != "family_shared" && event.customerPrice != 0 {
            let sold = Self.fiscalMonth(event.pacificDay)
            let settled = Self.fiscalMonth(event.settlementDay ?? event.pacificDay)
            guard sold != settled else { continue }
            if compared.contains(sold) { expected[event.currency, default: 0] += event.proceeds ?? 0 }
            if compared.contains(settled) { expected[event.currency, default: 0] -= event.proceeds ?? 0 }
        }
        let actual = sums(view: .monthly, measure: .partnerShare, cause: .timing, \.difference)
        return Check(
            name: "monthly timing = proceeds sold in the month and settled after, less sold before and settled in it",
            expected: Self.text(expected),
            actual: Self.text(actual),
            holds: Self.same(expected, actual)
        )
    }

    func unplanted() -> Check {
        let unplanted: Set<TieOutCause> = [.exchangeRate, .refundOtherPeriod, .refundReversed]
        let rows = result.rows.filter {
            (unplanted.contains($0.key.cause) || $0.key.cause == .timing && $0.key.view == .daily)
                && ($0.events != 0 || ($0.difference ?? 1) != 0)
        }
        return Check(
            name: "no exchange_rate, refund_other_period, refund_reversed or daily timing (none planted)",
            expected: "0 rows",
            actual: "\(rows.count) rows"
                + Self.sample("first", rows.prefix(3).map { "\($0.key.cause.rawValue) \($0.key.period) \($0.detail)" }),
            holds: rows.isEmpty
        )
    }

    /// The event's price less Apple's true commission (15% after a year of paid service, else 30%), rounded half away
    /// from zero to the currency's minor unit: what Apple would pay without a tax. `slack` is one minor unit when the
    /// exact amount lies halfway between two (another rounding rule may take the other), else 0: the only room the
    /// checks leave, so a single event attributed to the wrong cause shows.
    static func atAppleRate(_ event: TruthEvent) -> (amount: Int64, slack: Int64) {
        let keep: Int64 = event.afterOneYear == true ? 85 : 70
        let minor = CurrencyFormat.milliunitsPerMinorUnit(event.currency)
        let exact = event.customerPrice * keep
        let step = 100 * minor
        let rounded = (abs(exact) + step / 2) / step * step
        return ((exact < 0 ? -rounded : rounded) / 100, abs(exact) % step == step / 2 ? minor : 0)
    }
}
