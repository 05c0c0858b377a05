/// One currency's ledger money for a run: its totals and one line per product, never mixed with another
/// currency. The object under `money.by_currency.<ISO code>` in summary.json (docs/reports.md).
public struct LedgerCurrencyMoney: Sendable, Equatable, Codable {
    /// Where the figures come from, written as `source` beside them.
    public static let source = "ledger (App Store Server API)"

    public var totals: LedgerMoneyFigures
    /// Per product, sorted by product id.
    public var products: [LedgerMoneyFigures]

    public init(currency: String, products: [LedgerMoneyFigures] = []) {
        self.products = products.sorted { $0.productId ?? "" < $1.productId ?? "" }
        var totals = LedgerMoneyFigures(currency: currency)
        for line in products {
            totals.paidTransactions += line.paidTransactions
            totals.grossMilliunits += line.grossMilliunits
            totals.fullRefunds += line.fullRefunds
            totals.fullRefundedMilliunits += line.fullRefundedMilliunits
            totals.proratedRefunds += line.proratedRefunds
            totals.proratedRefundedMilliunits += line.proratedRefundedMilliunits
        }
        self.totals = totals
    }

    public var currency: String { totals.currency }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: LedgerMoneyFigures.Key.self)
        totals = try LedgerMoneyFigures(from: c)
        products = try c.decode([LedgerMoneyFigures].self, forKey: .products)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: LedgerMoneyFigures.Key.self)
        try c.encode(Self.source, forKey: .source)
        try totals.encode(into: &c)
        try c.encode(products, forKey: .products)
    }
}
