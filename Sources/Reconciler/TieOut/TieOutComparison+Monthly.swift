import AppleReports

/// The monthly view (docs/tie-out.md, "The monthly view"): per fiscal month, product, country and customer currency,
/// the ledger's estimated proceeds against the Financial report's partner share, in three steps: the ledger's events
/// attributed through their Subscriber report partners, Apple's events the ledger lacks or books in another month,
/// and Apple's two reports against each other (settlement timing, then what is left).
extension TieOutComparison {
    mutating func monthly() {
        let scope = TieOutMonthScope(input)
        guard !scope.months.isEmpty else { return }
        monthlyLedger(scope)
        let subscriber = monthlyApple(scope)
        monthlyFinancial(scope, subscriber: subscriber)
    }

    func monthlyKey(
        _ group: TieOutMonthScope.Group,
        _ cause: TieOutCause,
        appleCurrency: String? = nil
    ) -> TieOutRow.Key {
        key(
            .monthly,
            group.month,
            group.product,
            group.country,
            group.currency,
            .partnerShare,
            cause,
            appleCurrency: appleCurrency
        )
    }

    /// The `exchange_rate` key of a group Apple pays in another currency, else nil.
    func exchangeRateKey(_ scope: TieOutMonthScope, _ group: TieOutMonthScope.Group) -> TieOutRow.Key? {
        scope.foreignCurrency(group).map { monthlyKey(group, .exchangeRate, appleCurrency: $0) }
    }

    /// Each ledger event of a compared month: a family member's copy, unknown to Apple, paired in the same month, or
    /// paired in another (timing).
    mutating func monthlyLedger(_ scope: TieOutMonthScope) {
        for (index, event) in input.ledger.enumerated() {
            guard let m = scope.month(event.day) else { continue }
            let group = scope.group(m, event.productId, event.country, event.currency)
            if let fx = exchangeRateKey(scope, group) {
                set.add(fx, ledgerUnits: event.units, ledgerAmount: event.proceeds, difference: 0, detail: nil)
                continue
            }
            let described = "\(event.kind.rawValue) \(event.transactionId) on \(event.day)"
            func alone(_ cause: TieOutCause, _ detail: String) {
                set.add(
                    monthlyKey(group, cause),
                    ledgerUnits: event.units,
                    ledgerAmount: event.proceeds,
                    difference: event.proceeds,
                    detail: detail
                )
            }
            if event.familyShared {
                alone(.familySharing, "\(described): FAMILY_SHARED")
                continue
            }
            guard let appleIndex = matching.appleOfLedger[index], let pair = matching.ledgerOfApple[appleIndex] else {
                alone(.unexplained, "\(described): not in Apple's Subscriber report")
                continue
            }
            let apple = input.apple[appleIndex]
            if scope.month(apple.day) == m {
                addProceeds(
                    view: .monthly,
                    period: m.name,
                    ledger: event,
                    apple: apple,
                    lead: .matched,
                    ledgerSide: true,
                    appleSide: true
                )
            } else {
                let appleMonth = AppleFiscalMonth(containing: apple.day).name
                alone(crossCause(pair.kind), "\(described); Apple books it on \(apple.day), fiscal month \(appleMonth)")
            }
        }
    }

    /// Each Subscriber report event of a compared month that is not paired in the same month: Apple only (a lost
    /// order, or a refund Apple reversed later), or paired in another month (its Apple side, timing). Returns the
    /// Subscriber report's units and proceeds per group, the bridge to the Financial report.
    mutating func monthlyApple(_ scope: TieOutMonthScope) -> [TieOutMonthScope.Group: (units: Int, proceeds: Int64)] {
        var subscriber: [TieOutMonthScope.Group: (units: Int, proceeds: Int64)] = [:]
        for (index, event) in input.apple.enumerated() {
            guard let m = scope.month(event.day) else { continue }
            let group = scope.group(m, event.productKey, event.country, event.currency)
            if exchangeRateKey(scope, group) != nil { continue }
            subscriber[group, default: (0, 0)].units += event.units
            subscriber[group, default: (0, 0)].proceeds += event.proceeds
            guard let pair = matching.ledgerOfApple[index] else {
                let reversal = matching.reversalOfApple[index].map { input.reversals[$0] }
                set.add(
                    monthlyKey(group, reversal == nil ? .unexplained : .refundReversed),
                    appleUnits: event.units,
                    appleAmount: event.proceeds,
                    difference: -event.proceeds,
                    detail: reversal.map { Self.reversalText(event, $0) } ?? Self.lostOrderText(event)
                )
                continue
            }
            let ledger = input.ledger[pair.index]
            guard scope.month(ledger.day) != m else { continue }  // counted with its ledger event
            addProceeds(
                view: .monthly,
                period: m.name,
                ledger: ledger,
                apple: event,
                lead: crossCause(pair.kind),
                ledgerSide: false,
                appleSide: true
            )
        }
        return subscriber
    }

    /// Apple's two reports against each other: per group, the Financial report's partner share less the Subscriber
    /// report's proceeds; what the detailed reports show was settled in another month than sold is `timing`, the
    /// rest `unexplained`.
    mutating func monthlyFinancial(
        _ scope: TieOutMonthScope,
        subscriber: [TieOutMonthScope.Group: (units: Int, proceeds: Int64)]
    ) {
        var financial: [TieOutMonthScope.Group: (units: Int, amount: Int64)] = [:]
        for share in input.partnerShares where scope.months.contains(share.fiscalMonth) {
            let group = scope.group(share.fiscalMonth, share.productId, share.country, share.currency)
            if let fx = exchangeRateKey(scope, group) {
                set.add(
                    fx,
                    appleUnits: share.quantity,
                    appleAmount: share.amount,
                    difference: 0,
                    detail:
                        "partner share paid in \(share.shareCurrency) for prices in \(share.currency): compare at Apple's rate"
                )
                continue
            }
            financial[group, default: (0, 0)].units += share.quantity
            financial[group, default: (0, 0)].amount += share.amount
        }
        var settled: [TieOutMonthScope.Group: TieOutSettlement] = [:]
        for settlement in input.settlements where scope.months.contains(settlement.fiscalMonth) {
            let group = scope.group(
                settlement.fiscalMonth,
                settlement.productId,
                settlement.country,
                settlement.currency
            )
            settled[group] = settlement
        }
        for group in Set(financial.keys).union(subscriber.keys).union(settled.keys)
        where exchangeRateKey(scope, group) == nil {
            addSettlement(
                scope,
                group,
                reported: financial[group] ?? (0, 0),
                seen: subscriber[group] ?? (0, 0),
                shift: settled[group]
            )
        }
    }

    /// One group's settlement `timing` row (sold in another fiscal month than settled) and `unexplained` rest.
    mutating func addSettlement(
        _ scope: TieOutMonthScope,
        _ group: TieOutMonthScope.Group,
        reported: (units: Int, amount: Int64),
        seen: (units: Int, proceeds: Int64),
        shift: TieOutSettlement?
    ) {
        func money(_ amount: Int64) -> String { CurrencyFormat.format(milliunits: amount, currency: group.currency) }
        let inUnits = shift?.quantityIn ?? 0
        let inAmount = shift?.amountIn ?? 0
        let outUnits = shift?.quantityOut ?? 0
        let outAmount = shift?.amountOut ?? 0
        if inAmount != 0 || outAmount != 0 || inUnits != 0 || outUnits != 0 {
            set.add(
                monthlyKey(group, .timing),
                appleUnits: inUnits - outUnits,
                appleAmount: inAmount - outAmount,
                difference: outAmount - inAmount,
                detail: "settled in \(group.month), sold before: \(money(inAmount)) (\(inUnits) units); sold in "
                    + "\(group.month), settled in the next fiscal month: \(money(outAmount)) (\(outUnits) units)"
            )
        }
        let restUnits = reported.units - seen.units - (inUnits - outUnits)
        let restAmount = reported.amount - seen.proceeds - (inAmount - outAmount)
        guard restUnits != 0 || restAmount != 0 else { return }
        let month = scope.months.first { $0.name == group.month }
        let unknownLater =
            month.map { input.settledLaterKnown.contains($0) } == false
            ? " (the next fiscal month's detailed Financial report is not imported: what \(group.month) sold and "
                + "the next month settled is not known)" : ""
        set.add(
            monthlyKey(group, .unexplained),
            appleUnits: restUnits,
            appleAmount: restAmount,
            difference: -restAmount,
            detail: "the Financial report's partner share \(money(reported.amount)) (\(reported.units) units) "
                + "differs from the Subscriber report's proceeds \(money(seen.proceeds)) (\(seen.units) units) "
                + "by \(money(restAmount)) beyond settlement timing\(unknownLater)"
        )
    }
}
