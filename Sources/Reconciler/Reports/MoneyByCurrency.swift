/// Real money of a run per currency, from the prices Apple signed into the ledger (App Store Server API
/// rows of `subscription_transactions`; verifyReceipt rows have no price and stay with `MoneySummary`'s
/// catalog estimates). Folded one transaction at a time, bounded by currencies x products.
///
/// Encoded as the object `money.by_currency` of summary.json, keyed by ISO 4217 code; see docs/reports.md
/// ("Money per currency").
public struct MoneyByCurrency: Sendable, Equatable, Codable {
    /// Currency -> its money, totals and per product.
    public private(set) var currencies: [String: LedgerCurrencyMoney]

    public init(currencies: [String: LedgerCurrencyMoney] = [:]) {
        self.currencies = currencies
    }

    /// A product in a storefront: the finest line folded.
    struct LineKey: Hashable, Sendable {
        var productId: String
        var storefront: String
    }

    /// Per currency then product and storefront, the figures being folded (see `RunSummaryAccumulator`).
    typealias Lines = [String: [LineKey: LedgerMoneyFigures]]

    init(lines: Lines, source: String = LedgerCurrencyMoney.source) {
        currencies = lines.mapValues { products in
            LedgerCurrencyMoney(
                currency: products.values.first?.currency ?? "",
                lines: Array(products.values),
                source: source
            )
        }
    }

    /// Folds one paid ledger-priced transaction (price > 0 and a currency, not Sandbox) for `scope` (the period,
    /// or history found), with its proceeds by `estimate`; others, and transactions counting nowhere in `scope`,
    /// are ignored.
    static func add(
        _ transaction: ReportTransaction,
        scope: PeriodScope,
        estimate: ProceedsEstimate,
        to lines: inout Lines
    ) {
        guard transaction.isMoney, let price = transaction.priceMilliunits, price > 0,
            let currency = transaction.currency,
            transaction.purchaseScope == scope || transaction.refundScope == scope
        else { return }
        let storefront = transaction.storefront ?? LedgerCurrencyMoney.unknownStorefront
        lines[currency, default: [:]][
            LineKey(productId: transaction.productId, storefront: storefront),
            default: LedgerMoneyFigures(currency: currency, productId: transaction.productId, storefront: storefront)
        ].add(transaction, scope: scope, estimate: estimate)
    }

    /// ISO codes present, sorted.
    public var codes: [String] { currencies.keys.sorted() }

    public var isEmpty: Bool { currencies.isEmpty }

    /// One line per currency for a terminal (the demo): `USD  gross 19.98 (2)  refunded 14.49 (1 full,
    /// 1 prorated)  net 5.49  est. net proceeds 3.84  [ledger (App Store Server API)]`. Empty when the run saw no
    /// priced transaction.
    public func lines() -> [String] {
        codes.compactMap { currencies[$0] }.map { money in
            let t = money.totals
            // verifyReceipt shows a refund, never its share: catalog refunds are valued in full.
            let refunds =
                money.source == LedgerCurrencyMoney.catalogSource
                ? "(\(t.refunds), valued in full)" : "(\(t.fullRefunds) full, \(t.proratedRefunds) prorated)"
            return "\(t.currency)  gross \(t.gross) (\(t.paidTransactions))  refunded \(t.refunded) \(refunds)  "
                + "net \(t.net)  est. net proceeds \(t.netProceeds)  [\(money.source)]"
        }
    }

    public init(from decoder: any Decoder) throws {
        currencies = try decoder.singleValueContainer().decode([String: LedgerCurrencyMoney].self)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(currencies)
    }
}
