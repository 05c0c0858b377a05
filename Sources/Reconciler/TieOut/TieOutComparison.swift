import AppleReports
import CivilTime

/// The tie-out itself, pure: the ledger's events against Apple's per Pacific day (the Subscriber report) and per
/// fiscal month (the Financial report), every difference attributed to a cause (docs/tie-out.md).
public struct TieOutComparison {
    public let input: TieOutInput
    let matching: TieOutMatching
    var set = TieOutRowSet()
    var headlines: [String: TieOutCurrencyHeadline] = [:]
    var appleOnly: [TieOutAppleEvent] = []
    var ledgerOnly: [TieOutLedgerEvent] = []

    public init(_ input: TieOutInput) {
        self.input = input
        matching = TieOutMatching(
            ledger: input.ledger,
            apple: input.apple,
            reversals: input.reversals,
            uncovered: input.daysWithoutReport
        )
    }

    /// Compares; `notes` are carried into the result as they are.
    public static func compare(
        _ input: TieOutInput,
        fiscalMonth: AppleFiscalMonth? = nil,
        notes: [String] = []
    ) -> TieOutResult {
        var comparison = TieOutComparison(input)
        comparison.daily()
        comparison.monthly()
        return TieOutResult(
            from: input.from,
            to: input.to,
            fiscalMonth: fiscalMonth,
            fiscalMonthsCompared: input.fiscalMonths,
            rows: comparison.set.sorted,
            appleOnly: comparison.appleOnly.sorted {
                ($0.day, $0.fileName, $0.line) < ($1.day, $1.fileName, $1.line)
            },
            ledgerOnly: comparison.ledgerOnly.sorted {
                ($0.day, $0.instant, $0.transactionId) < ($1.day, $1.instant, $1.transactionId)
            },
            headline: comparison.headlines.values.sorted { $0.currency < $1.currency },
            notes: notes,
            commission: input.commission
        )
    }

    // MARK: The daily view (docs/tie-out.md, "The daily view")

    mutating func daily() {
        for (index, event) in input.ledger.enumerated() where input.comparesDaily(event.day) {
            dailyLedger(index, event)
        }
        for (index, event) in input.apple.enumerated() where input.comparesDaily(event.day) {
            dailyApple(index, event)
        }
    }

    func key(
        _ view: TieOutRow.View,
        _ period: String,
        _ product: String,
        _ country: String,
        _ currency: String,
        _ measure: TieOutRow.Measure,
        _ cause: TieOutCause,
        appleCurrency: String? = nil
    ) -> TieOutRow.Key {
        TieOutRow.Key(
            view: view,
            period: period,
            productId: product,
            country: country,
            currency: currency,
            measure: measure,
            cause: cause,
            appleCurrency: appleCurrency ?? currency
        )
    }

    /// The cause of a pair matched across days.
    func crossCause(_ kind: TieOutMatching.Kind) -> TieOutCause {
        kind == .refundByPurchase ? .refundOtherPeriod : .timing
    }

    mutating func dailyLedger(_ index: Int, _ event: TieOutLedgerEvent) {
        let day = event.day.description
        func row(_ measure: TieOutRow.Measure, _ cause: TieOutCause) -> TieOutRow.Key {
            key(.daily, day, event.productId, event.country, event.currency, measure, cause)
        }
        headlines[event.currency, default: TieOutCurrencyHeadline(currency: event.currency)].ledgerMoney += abs(
            event.amount
        )
        let described = "\(event.kind.rawValue) \(event.transactionId) at \(RFC3339.string(event.instant))"
        /// The event's price and estimated proceeds alone on `cause`'s rows: Apple has no part in them on this day.
        func alone(_ cause: TieOutCause, _ detail: String) {
            set.add(
                row(.customerPrice, cause),
                ledgerUnits: event.units,
                ledgerAmount: event.amount,
                difference: event.amount,
                detail: detail
            )
            set.add(row(.proceeds, cause), ledgerAmount: event.proceeds, difference: event.proceeds, detail: detail)
        }
        if event.familyShared {
            alone(.familySharing, "\(described): FAMILY_SHARED, Apple bills the purchaser's transaction")
            return
        }
        guard let appleIndex = matching.appleOfLedger[index], let pair = matching.ledgerOfApple[appleIndex] else {
            headlines[event.currency]?.unexplainedMoney += abs(event.amount)
            ledgerOnly.append(event)
            alone(.unexplained, "\(described): not in Apple's Subscriber report")
            return
        }
        let apple = input.apple[appleIndex]
        guard pair.kind == .sameDay else {
            alone(
                crossCause(pair.kind),
                "\(described) is \(day) Pacific; Apple books it on \(apple.day) (\(apple.source))"
            )
            return
        }
        headlines[event.currency]?.matchedMoney += 2 * abs(event.amount)
        let detail = "\(event.transactionId) = \(apple.source)"
        set.add(
            row(.customerPrice, .matched),
            ledgerUnits: event.units,
            ledgerAmount: event.amount,
            appleUnits: apple.units,
            appleAmount: apple.amount,
            difference: event.amount - apple.amount,
            detail: detail
        )
        addProceeds(
            view: .daily,
            period: day,
            ledger: event,
            apple: apple,
            lead: .matched,
            ledgerSide: true,
            appleSide: true
        )
    }

    mutating func dailyApple(_ index: Int, _ event: TieOutAppleEvent) {
        let day = event.day.description
        func row(_ measure: TieOutRow.Measure, _ cause: TieOutCause, _ appleCurrency: String? = nil) -> TieOutRow.Key {
            key(
                .daily,
                day,
                event.productKey,
                event.country,
                event.currency,
                measure,
                cause,
                appleCurrency: appleCurrency
            )
        }
        headlines[event.currency, default: TieOutCurrencyHeadline(currency: event.currency)].appleMoney += abs(
            event.amount
        )
        guard let pair = matching.ledgerOfApple[index] else {
            let reversal = matching.reversalOfApple[index].map { input.reversals[$0] }
            // A refund Apple reversed is explained: the ledger holds the purchase unrefunded.
            let cause: TieOutCause = reversal == nil ? .unexplained : .refundReversed
            if reversal == nil {
                headlines[event.currency]?.unexplainedMoney += abs(event.amount)
                appleOnly.append(event)
            }
            let detail = reversal.map { Self.reversalText(event, $0) } ?? Self.lostOrderText(event)
            set.add(
                row(.customerPrice, cause),
                appleUnits: event.units,
                appleAmount: event.amount,
                difference: -event.amount,
                detail: detail
            )
            set.add(
                row(.proceeds, cause, event.proceedsCurrency),
                appleUnits: event.units,
                appleAmount: event.proceeds,
                difference: -event.proceeds,
                detail: detail
            )
            return
        }
        guard pair.kind != .sameDay else { return }  // counted with its ledger event
        let ledger = input.ledger[pair.index]
        let cause = crossCause(pair.kind)
        let detail = "\(event.source) on \(day); the ledger books \(ledger.transactionId) on \(ledger.day) Pacific"
        set.add(
            row(.customerPrice, cause),
            appleUnits: event.units,
            appleAmount: event.amount,
            difference: -event.amount,
            detail: detail
        )
        addProceeds(
            view: .daily,
            period: day,
            ledger: ledger,
            apple: event,
            lead: cause,
            ledgerSide: false,
            appleSide: true
        )
    }

    /// An Apple refund that a reversal explains.
    static func reversalText(_ event: TieOutAppleEvent, _ reversal: TieOutReversal) -> String {
        "\(event.source): refund of \(reversal.transactionId), reversed by Apple at \(RFC3339.string(reversal.reversedAt)) "
            + "(REFUND_REVERSED); the ledger holds the purchase unrefunded"
    }

    /// Why an Apple event is unexplained: a lost order, or an Apple ID that maps to no product.
    public static func lostOrderText(_ event: TieOutAppleEvent) -> String {
        let what = event.isRefund ? "refund" : "purchase"
        guard event.productId != nil else {
            return
                "\(event.source): Subscription Apple ID \(event.subscriptionAppleId) maps to no product (add apple_id "
                + "to the catalog, or import a Financial report naming it)"
        }
        return "\(event.source): \(what) not in the ledger (subscriber \(event.subscriberId ?? "unknown"))"
    }

    /// The proceeds rows of a pair in the same currency: its amounts on the `lead` row (the ledger's estimate when
    /// `ledgerSide`, Apple's proceeds when `appleSide`), then the split of the difference (`TieOutProceedsSplit`); a
    /// pair paid in another currency is one `exchange_rate` row.
    mutating func addProceeds(
        view: TieOutRow.View,
        period: String,
        ledger: TieOutLedgerEvent,
        apple: TieOutAppleEvent,
        lead: TieOutCause,
        ledgerSide: Bool,
        appleSide: Bool
    ) {
        let measure: TieOutRow.Measure = view == .daily ? .proceeds : .partnerShare
        func row(_ cause: TieOutCause, _ appleCurrency: String? = nil) -> TieOutRow.Key {
            key(
                view,
                period,
                ledger.productId,
                ledger.country,
                ledger.currency,
                measure,
                cause,
                appleCurrency: appleCurrency
            )
        }
        if apple.proceedsCurrency != ledger.currency {
            if ledgerSide {
                set.add(
                    row(.exchangeRate, apple.proceedsCurrency),
                    ledgerUnits: ledger.units,
                    ledgerAmount: ledger.proceeds,
                    difference: 0,
                    detail: nil
                )
            }
            if appleSide {
                set.add(
                    row(.exchangeRate, apple.proceedsCurrency),
                    appleUnits: apple.units,
                    appleAmount: apple.proceeds,
                    difference: 0,
                    detail:
                        "\(apple.source): proceeds paid in \(apple.proceedsCurrency) for a price in \(ledger.currency)"
                )
            }
            return
        }
        let leadDifference = (ledgerSide ? ledger.proceeds : 0) - (appleSide ? apple.proceeds : 0)
        let split = TieOutProceedsSplit(ledger: ledger, apple: apple, commission: input.commission)
        let splitTotal = split.parts.reduce(0) { $0 + $1.difference }
        // The lead row keeps what the split does not attribute: zero for a same-day pair, the ledger's estimate moved
        // to or from the other day for a pair across days.
        set.add(
            row(lead),
            ledgerUnits: ledgerSide ? ledger.units : 0,
            ledgerAmount: ledgerSide ? ledger.proceeds : 0,
            appleUnits: appleSide ? apple.units : 0,
            appleAmount: appleSide ? apple.proceeds : 0,
            difference: appleSide ? leadDifference - splitTotal : leadDifference,
            detail: "\(ledger.transactionId) = \(apple.source)"
        )
        guard appleSide else { return }
        for part in split.parts {
            set.add(row(part.cause), difference: part.difference, detail: part.detail)
        }
    }

    // MARK: The monthly view (docs/tie-out.md, "The monthly view")

    mutating func monthly() {
        let months = Set(input.fiscalMonths)
        guard !months.isEmpty else { return }
        func month(_ day: PacificDay) -> AppleFiscalMonth? {
            let month = AppleFiscalMonth(containing: day)
            return months.contains(month) ? month : nil
        }
        struct Group: Hashable {
            var month: String
            var product: String
            var country: String
            var currency: String
        }
        // Keys Apple pays in another currency are one exchange_rate row each.
        var foreign: [Group: String] = [:]
        for share in input.partnerShares
        where months.contains(share.fiscalMonth) && share.shareCurrency != share.currency {
            foreign[
                Group(
                    month: share.fiscalMonth.name,
                    product: share.productId,
                    country: share.country,
                    currency: share.currency
                )
            ] =
                share.shareCurrency
        }
        for event in input.apple where event.proceedsCurrency != event.currency {
            guard let m = month(event.day) else { continue }
            foreign[Group(month: m.name, product: event.productKey, country: event.country, currency: event.currency)] =
                event.proceedsCurrency
        }
        func fxKey(_ group: Group) -> TieOutRow.Key? {
            foreign[group].map {
                key(
                    .monthly,
                    group.month,
                    group.product,
                    group.country,
                    group.currency,
                    .partnerShare,
                    .exchangeRate,
                    appleCurrency: $0
                )
            }
        }
        var subscriber: [Group: (units: Int, proceeds: Int64)] = [:]
        for (index, event) in input.ledger.enumerated() {
            guard let m = month(event.day) else { continue }
            let group = Group(month: m.name, product: event.productId, country: event.country, currency: event.currency)
            func row(_ cause: TieOutCause) -> TieOutRow.Key {
                key(.monthly, m.name, event.productId, event.country, event.currency, .partnerShare, cause)
            }
            if let fx = fxKey(group) {
                set.add(fx, ledgerUnits: event.units, ledgerAmount: event.proceeds, difference: 0, detail: nil)
                continue
            }
            let described = "\(event.kind.rawValue) \(event.transactionId) on \(event.day)"
            if event.familyShared {
                set.add(
                    row(.familySharing),
                    ledgerUnits: event.units,
                    ledgerAmount: event.proceeds,
                    difference: event.proceeds,
                    detail: "\(described): FAMILY_SHARED"
                )
                continue
            }
            guard let appleIndex = matching.appleOfLedger[index], let pair = matching.ledgerOfApple[appleIndex] else {
                set.add(
                    row(.unexplained),
                    ledgerUnits: event.units,
                    ledgerAmount: event.proceeds,
                    difference: event.proceeds,
                    detail: "\(described): not in Apple's Subscriber report"
                )
                continue
            }
            let apple = input.apple[appleIndex]
            if month(apple.day) == m {
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
                set.add(
                    row(crossCause(pair.kind)),
                    ledgerUnits: event.units,
                    ledgerAmount: event.proceeds,
                    difference: event.proceeds,
                    detail:
                        "\(described); Apple books it on \(apple.day), fiscal month \(AppleFiscalMonth(containing: apple.day).name)"
                )
            }
        }
        for (index, event) in input.apple.enumerated() {
            guard let m = month(event.day) else { continue }
            let group = Group(
                month: m.name,
                product: event.productKey,
                country: event.country,
                currency: event.currency
            )
            if fxKey(group) != nil { continue }
            subscriber[group, default: (0, 0)].units += event.units
            subscriber[group, default: (0, 0)].proceeds += event.proceeds
            guard let pair = matching.ledgerOfApple[index] else {
                let reversal = matching.reversalOfApple[index].map { input.reversals[$0] }
                set.add(
                    key(
                        .monthly,
                        m.name,
                        event.productKey,
                        event.country,
                        event.currency,
                        .partnerShare,
                        reversal == nil ? .unexplained : .refundReversed
                    ),
                    appleUnits: event.units,
                    appleAmount: event.proceeds,
                    difference: -event.proceeds,
                    detail: reversal.map { Self.reversalText(event, $0) } ?? Self.lostOrderText(event)
                )
                continue
            }
            let ledger = input.ledger[pair.index]
            guard month(ledger.day) != m else { continue }  // counted with its ledger event
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
        // Apple's two reports against each other: the Financial report's partner share less the Subscriber report's
        // proceeds of the same key.
        var financial: [Group: (units: Int, amount: Int64, lines: Int)] = [:]
        for share in input.partnerShares where months.contains(share.fiscalMonth) {
            let group = Group(
                month: share.fiscalMonth.name,
                product: share.productId,
                country: share.country,
                currency: share.currency
            )
            if let fx = fxKey(group) {
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
            financial[group, default: (0, 0, 0)].units += share.quantity
            financial[group, default: (0, 0, 0)].amount += share.amount
            financial[group, default: (0, 0, 0)].lines += 1
        }
        var settled: [Group: TieOutSettlement] = [:]
        for settlement in input.settlements where months.contains(settlement.fiscalMonth) {
            settled[
                Group(
                    month: settlement.fiscalMonth.name,
                    product: settlement.productId,
                    country: settlement.country,
                    currency: settlement.currency
                )
            ] = settlement
        }
        for group in Set(financial.keys).union(subscriber.keys).union(settled.keys) where fxKey(group) == nil {
            let reported = financial[group] ?? (0, 0, 0)
            let seen = subscriber[group] ?? (0, 0)
            let currency = group.currency
            func money(_ amount: Int64) -> String { CurrencyFormat.format(milliunits: amount, currency: currency) }
            func row(_ cause: TieOutCause) -> TieOutRow.Key {
                key(.monthly, group.month, group.product, group.country, currency, .partnerShare, cause)
            }
            // Settlement timing: sold in another fiscal month than Apple settled it (the detailed reports).
            let shift = settled[group]
            let inUnits = shift?.quantityIn ?? 0
            let inAmount = shift?.amountIn ?? 0
            let outUnits = shift?.quantityOut ?? 0
            let outAmount = shift?.amountOut ?? 0
            if inAmount != 0 || outAmount != 0 || inUnits != 0 || outUnits != 0 {
                set.add(
                    row(.timing),
                    appleUnits: inUnits - outUnits,
                    appleAmount: inAmount - outAmount,
                    difference: outAmount - inAmount,
                    detail: "settled in \(group.month), sold before: \(money(inAmount)) (\(inUnits) units); sold in "
                        + "\(group.month), settled in the next fiscal month: \(money(outAmount)) (\(outUnits) units)"
                )
            }
            let restUnits = reported.units - seen.units - (inUnits - outUnits)
            let restAmount = reported.amount - seen.proceeds - (inAmount - outAmount)
            guard restUnits != 0 || restAmount != 0 else { continue }
            let month = months.first { $0.name == group.month }
            let unknownLater =
                month.map { input.settledLaterKnown.contains($0) } == false
                ? " (the next fiscal month's detailed Financial report is not imported: what \(group.month) sold and "
                    + "the next month settled is not known)" : ""
            set.add(
                row(.unexplained),
                appleUnits: restUnits,
                appleAmount: restAmount,
                difference: -restAmount,
                detail: "the Financial report's partner share \(money(reported.amount)) (\(reported.units) units) "
                    + "differs from the Subscriber report's proceeds \(money(seen.proceeds)) (\(seen.units) units) "
                    + "by \(money(restAmount)) beyond settlement timing\(unknownLater)"
            )
        }
    }
}
