/// How the proceeds of a matched pair (a ledger event and its Subscriber report event, same currency) differ, split
/// into causes (docs/tie-out.md, "Proceeds: commission tier and tax").
///
/// Apple's commission rate for the event: the after-first-year rate (15%) when its Proceeds Reason says `Rate After
/// One Year`, or when Apple paid more than the price less the first-year commission could give (the 85% rate without
/// a reason: the Small Business Program); else the first-year rate. Then:
///
/// - `commission_tier` = the ledger's estimate less the estimate at Apple's rate;
/// - the rest (estimate at Apple's rate less Apple's proceeds) is `matched` within one minor unit (rounding), `tax`
///   when Apple paid less (the storefront's tax), and `unexplained` when Apple paid more.
struct TieOutProceedsSplit: Equatable {
    struct Part: Equatable {
        var cause: TieOutCause
        var difference: Int64
        var detail: String
    }

    var parts: [Part] = []

    init(ledger: TieOutLedgerEvent, apple: TieOutAppleEvent, commission: CommissionPolicy) {
        let currency = ledger.currency
        let sign: Int64 = ledger.amount < 0 ? -1 : 1
        let price = abs(ledger.amount)
        let tolerance = CurrencyFormat.milliunitsPerMinorUnit(currency)
        let atFirstYear = CommissionPolicy.proceeds(of: price, rate: commission.firstYearRate, currency: currency)
        let paid = abs(apple.proceeds)
        let appleRate: Int64
        let why: String
        if apple.afterOneYear {
            appleRate = commission.afterFirstYearRate
            why = "Rate After One Year"
        } else if paid > atFirstYear + tolerance {
            appleRate = commission.afterFirstYearRate
            why = "Apple paid above the first-year rate: Small Business Program or after a year"
        } else {
            appleRate = commission.firstYearRate
            why = "first-year rate"
        }
        let atAppleRate = sign * CommissionPolicy.proceeds(of: price, rate: appleRate, currency: currency)
        let tier = ledger.proceeds - atAppleRate
        if tier != 0 {
            parts.append(
                Part(
                    cause: .commissionTier,
                    difference: tier,
                    detail:
                        "\(ledger.transactionId): Apple's commission \(CommissionPolicy.percent(appleRate))% (\(why)), "
                        + "the ledger's estimate \(CommissionPolicy.percent(ledger.commissionRate))%"
                )
            )
        }
        let rest = atAppleRate - apple.proceeds
        if abs(rest) <= tolerance {
            if rest != 0 {
                parts.append(Part(cause: .matched, difference: rest, detail: "\(ledger.transactionId): rounding"))
            }
        } else if rest * sign > 0 {
            parts.append(
                Part(
                    cause: .tax,
                    difference: rest,
                    detail:
                        "\(ledger.transactionId): Apple's proceeds \(CurrencyFormat.format(milliunits: apple.proceeds, currency: currency)) "
                        + "below price less \(CommissionPolicy.percent(appleRate))% commission "
                        + "\(CurrencyFormat.format(milliunits: atAppleRate, currency: currency)) (\(apple.country) tax)"
                )
            )
        } else {
            parts.append(
                Part(
                    cause: .unexplained,
                    difference: rest,
                    detail:
                        "\(ledger.transactionId): Apple's proceeds \(CurrencyFormat.format(milliunits: apple.proceeds, currency: currency)) "
                        + "above price less \(CommissionPolicy.percent(appleRate))% commission ("
                        + "\(apple.source))"
                )
            )
        }
    }
}
