/// What Apple pays the developer of a sale, as the simulator's truth knows it (docs/simulator.md, "App Store Connect
/// reports"): the customer price less the tax it includes (`Storefront.taxPercent`), less Apple's commission on
/// the rest, 30% until the subscriber has a year of paid service in the subscription and 15% from then on ("Rate
/// After One Year"). Paid service adds up the periods of paid transactions (price above 0, refunded ones included:
/// they were paid when sold) and starts again after a gap of more than 60 days. No Small Business Program.
enum ProceedsRule {
    static let year: Int64 = 365 * SimTime.day
    static let retentionGap: Int64 = 60 * SimTime.day

    /// For each of `transactions` (one subscription, by purchase date): whether it sold after a year of paid service.
    static func afterOneYear(_ transactions: [SimTransaction], prices: [Int64]) -> [Bool] {
        var served: Int64 = 0
        var lastEnd: Int64?
        var flags: [Bool] = []
        for (t, price) in zip(transactions, prices) {
            guard price > 0 else {
                flags.append(false)
                continue
            }
            if let end = lastEnd, t.purchase - end > retentionGap { served = 0 }
            flags.append(served >= year)
            served += t.expires - t.purchase
            lastEnd = max(lastEnd ?? t.expires, t.expires)
        }
        return flags
    }

    /// Apple's commission in percent.
    static func commissionPercent(afterOneYear: Bool) -> Int64 { afterOneYear ? 15 : 30 }

    /// The proceeds of `amount` (milliunits, either sign) in `storefront`: the amount without its tax, less the
    /// commission, `amount x (100 - commission) / (100 + tax)` rounded once to the currency's minor unit half away
    /// from zero (Apple does not document its rounding; without tax this is the price less the commission rounded
    /// the same way, the convention docs/reports.md states for estimated proceeds).
    static func proceeds(of amount: Int64, afterOneYear: Bool, storefront: Storefront) -> Int64 {
        let numerator = abs(amount) * (100 - commissionPercent(afterOneYear: afterOneYear))
        let denominator = (100 + storefront.taxPercent) * storefront.minorUnit
        let magnitude = (numerator + denominator / 2) / denominator * storefront.minorUnit
        return amount < 0 ? -magnitude : magnitude
    }
}
