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
}
