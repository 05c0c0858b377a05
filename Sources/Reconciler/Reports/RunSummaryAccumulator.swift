/// Folds a run's items and transactions, one at a time, into the numbers of `RunSummary`.
///
/// Memory is bounded by the number of products, groups and outcomes, never by the number of rows:
/// the report generator streams rows from PostgreSQL through it, and `RunSummary(data:)` folds its
/// in-memory arrays through the same code, so both paths agree on every number by construction.
public struct RunSummaryAccumulator: Sendable {
    struct Group: Sendable {
        var selected = 0
        var byOutcome = Dictionary(uniqueKeysWithValues: ReportOutcome.all.map { ($0, 0) })
        var byNewState = Dictionary(uniqueKeysWithValues: ReportOutcome.states.map { ($0, 0) })
    }

    static let troubled: Set<String> = ["grace_period", "billing_retry"]

    /// The item counts; `due`, `pending` and the rejected schedule's are the run's, set by `RunSummary`.
    var counts = RunSummary.Counts(
        due: 0,
        selected: 0,
        done: 0,
        pending: 0,
        verified: 0,
        unresolved: 0,
        changed: 0,
        errors: 0,
        expiryMovedBackwards: 0
    )
    var byOutcome = Dictionary(uniqueKeysWithValues: ReportOutcome.all.map { ($0, 0) })
    var byNewState = Dictionary(uniqueKeysWithValues: ReportOutcome.states.map { ($0, 0) })
    var byProduct: [String: Group] = [:]
    var byGroup: [String: Group] = [:]
    var funnel = RunSummary.RetryFunnel(
        inRetryOrGraceBefore: 0,
        recovered: 0,
        stillInGracePeriod: 0,
        stillInBillingRetry: 0,
        expired: 0,
        revoked: 0,
        enteredGracePeriod: 0,
        enteredBillingRetry: 0
    )

    /// The transaction counts, and the items that lapsed on a trial or an introductory offer.
    var transactions = RunSummary.TransactionCounts(
        total: 0,
        firstSeenByKind: Dictionary(uniqueKeysWithValues: ReportOutcome.kinds.map { ($0, 0) }),
        refundsSeen: 0,
        familyRevocationsSeen: 0,
        trialsStarted: 0,
        introOffersStarted: 0,
        trialConversions: 0,
        introOfferConversions: 0,
        trialsLapsed: 0,
        introOffersLapsed: 0
    )
    /// The period's money of rows without a signed price (verifyReceipt), priced with the catalog.
    var catalogMoney: MoneyByCurrency.Lines = [:]
    /// Per product: intro-offer purchases of the period priced at the catalog's intro price.
    var catalogIntroPurchases: [String: Int] = [:]
    /// The period's purchases and refunds the catalog could not price, per product and reason.
    var catalogUnpriced: [CatalogUnpricedLine.Key: CatalogUnpricedLine] = [:]
    var ledgerMoney: MoneyByCurrency.Lines = [:]
    /// Ledger money dated before the period, first seen (or its refund first seen) by this run.
    var historyMoney: MoneyByCurrency.Lines = [:]
    var historyFoundByKind = Dictionary(uniqueKeysWithValues: ReportOutcome.kinds.map { ($0, 0) })
    var refundsHistoryFound = 0
    var byDueReason: [String: Group] = [:]
    var sweepChanged = 0
    var byApp: [String: Group] = [:]
    var requestsByApp: [String: Int] = [:]
    var churnAndOffers = ChurnAndOffers()

    /// The commission (and conversion) of the money folded here.
    public let moneyOptions: ReportMoneyOptions
    /// Prices the rows without a signed price (docs/reports.md, "Money from the catalog").
    let catalogPricing: CatalogPricing

    public init(moneyOptions: ReportMoneyOptions = ReportMoneyOptions(), prices: [ProductPrice] = []) {
        self.moneyOptions = moneyOptions
        catalogPricing = CatalogPricing(prices: prices)
    }

    /// Counts one item (a row of `reconciliation_items`).
    public mutating func add(_ item: ReportItem) {
        let isDone = item.status == .done
        counts.selected += 1
        if isDone { counts.done += 1 }
        if isDone, let outcome = item.outcome, outcome != "unresolved" { counts.verified += 1 }
        if item.outcome == "unresolved" { counts.unresolved += 1 }
        if item.isChange { counts.changed += 1 }
        if item.isError { counts.errors += 1 }
        if item.isBackwardsMove { counts.expiryMovedBackwards += 1 }
        let outcome = item.outcome ?? ReportOutcome.pending
        let state = item.newState ?? ReportOutcome.unknown
        byOutcome[outcome, default: 0] += 1
        Self.count(
            &byDueReason[item.dueReason ?? ReportOutcome.unknown, default: Group()],
            outcome: outcome,
            state: isDone ? state : nil
        )
        if item.dueReason == SelectionSummary.sweepReason, item.isChange { sweepChanged += 1 }
        let app = item.bundleId ?? ReportOutcome.unknown
        Self.count(&byApp[app, default: Group()], outcome: outcome, state: isDone ? state : nil)
        requestsByApp[app, default: 0] += item.attempts
        churnAndOffers.add(item)
        if isDone { byNewState[state, default: 0] += 1 }
        Self.count(&byProduct[item.groupingProductId, default: Group()], outcome: outcome, state: isDone ? state : nil)
        Self.count(
            &byGroup[item.subscriptionGroupId ?? ReportOutcome.unknown, default: Group()],
            outcome: outcome,
            state: isDone ? state : nil
        )
        if item.outcome == "lapsed" {
            if item.lastTransactionWasTrial { transactions.trialsLapsed += 1 }
            if item.lastTransactionWasIntroOffer { transactions.introOffersLapsed += 1 }
        }
        // Only items Apple answered for (no unresolved/rejected/conflict): their new state is known.
        guard isDone, !item.isError else { return }
        let wasTroubled = item.previousState.map(Self.troubled.contains) ?? false
        if wasTroubled {
            funnel.inRetryOrGraceBefore += 1
            switch item.newState {
            case "active": funnel.recovered += 1
            case "grace_period": funnel.stillInGracePeriod += 1
            case "billing_retry": funnel.stillInBillingRetry += 1
            case "expired": funnel.expired += 1
            case "revoked": funnel.revoked += 1
            default: break
            }
        }
        if item.newState == "grace_period" && item.previousState != "grace_period" { funnel.enteredGracePeriod += 1 }
        if item.newState == "billing_retry" && !wasTroubled { funnel.enteredBillingRetry += 1 }
    }

    /// Counts one ledger transaction of the run (a row of transactions.csv): by purchase or refund date within
    /// the run's period, and what is dated before it apart as history found (docs/reports.md, "The period").
    public mutating func add(_ transaction: ReportTransaction) {
        transactions.total += 1
        churnAndOffers.add(transaction)
        if transaction.purchaseScope == .period {
            transactions.firstSeenByKind[transaction.kind, default: 0] += 1
            if transaction.isTrial && !transaction.previousWasTrial { transactions.trialsStarted += 1 }
            if transaction.isIntroOffer && !transaction.previousWasIntroOffer { transactions.introOffersStarted += 1 }
        }
        if transaction.purchaseScope == .historyFound { historyFoundByKind[transaction.kind, default: 0] += 1 }
        if transaction.refundScope == .period {
            if transaction.isFamilyRevocation {
                transactions.familyRevocationsSeen = (transactions.familyRevocationsSeen ?? 0) + 1
            } else {
                transactions.refundsSeen += 1
            }
        }
        if transaction.refundScope == .historyFound { refundsHistoryFound += 1 }
        if transaction.isTrialConversion { transactions.trialConversions += 1 }
        if transaction.isIntroConversion { transactions.introOfferConversions += 1 }
        let estimate = moneyOptions.estimate
        MoneyByCurrency.add(transaction, scope: .period, estimate: estimate, to: &ledgerMoney)
        MoneyByCurrency.add(transaction, scope: .historyFound, estimate: estimate, to: &historyMoney)
        addCatalogMoney(transaction)
    }

    /// Catalog money only for rows without a signed price (verifyReceipt), so nothing is counted twice; Sandbox
    /// purchases are never money, free trials count nowhere (docs/reports.md, "Money from the catalog").
    mutating func addCatalogMoney(_ transaction: ReportTransaction) {
        let purchase = transaction.purchaseScope == .period
        let refund = transaction.refundScope == .period
        guard !transaction.isLedgerPriced, transaction.isMoney, !transaction.isTrial, purchase || refund else {
            return
        }
        switch catalogPricing.price(
            productId: transaction.productId,
            subscriptionCurrency: transaction.subscriptionCurrency,
            isTrial: transaction.isTrial,
            isIntroOffer: transaction.isIntroOffer
        ) {
        case .priced(let currency, let milliunits):
            var priced = transaction
            priced.priceMilliunits = milliunits
            priced.currency = currency
            priced.storefront = nil
            MoneyByCurrency.add(priced, scope: .period, estimate: moneyOptions.estimate, to: &catalogMoney)
            if purchase && transaction.isIntroOffer { catalogIntroPurchases[transaction.productId, default: 0] += 1 }
        case .unpriced(let reason):
            let key = CatalogUnpricedLine.Key(productId: transaction.productId, reason: reason)
            var line = catalogUnpriced[key] ?? CatalogUnpricedLine(productId: transaction.productId, reason: reason)
            if purchase { line.purchases += 1 }
            if refund { line.refunds += 1 }
            catalogUnpriced[key] = line
        }
    }

    private static func count(_ group: inout Group, outcome: String, state: String?) {
        group.selected += 1
        group.byOutcome[outcome, default: 0] += 1
        if let state { group.byNewState[state, default: 0] += 1 }
    }

    /// The money folded here: the ledger's, the history found and the catalog's estimates with what the catalog
    /// could not price, priced with `prices`.
    func money(prices: [ProductPrice]) -> MoneySummary {
        MoneySummary(
            catalog: MoneyByCurrency(lines: catalogMoney, source: LedgerCurrencyMoney.catalogSource),
            catalogUnpriced: Array(catalogUnpriced.values),
            catalogIntroPurchases: catalogIntroPurchases,
            prices: prices,
            byCurrency: MoneyByCurrency(lines: ledgerMoney),
            historyFound: MoneyByCurrency(lines: historyMoney),
            proceedsEstimate: moneyOptions.commission,
            proceedsCalibration: moneyOptions.estimate.calibration,
            fxRates: moneyOptions.fxRates
        )
    }

    /// The items per app with the requests made for them, by bundle id.
    var appCounts: [AppCounts] {
        byApp.map { id, group in
            AppCounts(
                id: id,
                selected: group.selected,
                requests: requestsByApp[id] ?? 0,
                byOutcome: group.byOutcome,
                byNewState: group.byNewState
            )
        }.sorted { $0.id < $1.id }
    }

    /// Why `run`'s items were selected, and its sweep's plan against what the sweep selected.
    func selection(of run: ReportRun) -> SelectionSummary {
        SelectionSummary(
            byDueReason: Self.groupCounts(byDueReason),
            sweep: run.sweepQuota.map { quota in
                SelectionSummary.Sweep(
                    eligible: run.sweepEligible ?? 0,
                    quota: quota,
                    selected: byDueReason[SelectionSummary.sweepReason]?.selected ?? 0,
                    changed: sweepChanged
                )
            }
        )
    }

    static func groupCounts(_ groups: [String: Group]) -> [RunSummary.GroupCounts] {
        groups.map { id, group in
            RunSummary.GroupCounts(
                id: id,
                selected: group.selected,
                byOutcome: group.byOutcome,
                byNewState: group.byNewState
            )
        }.sorted { $0.id < $1.id }
    }
}
