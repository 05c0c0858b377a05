/// One currency's ledger money for a run: its totals, one line per product and one per storefront (each with
/// its products), never mixed with another currency. The object under `money.by_currency.<ISO code>` in
/// summary.json (docs/reports.md).
public struct LedgerCurrencyMoney: Sendable, Equatable, Codable {
    /// Where the figures come from, written as `source` beside them.
    public static let source = "ledger (App Store Server API)"
    /// The source of catalog money: verifyReceipt rows priced with the `products` catalog.
    public static let catalogSource = "catalog (products table)"
    /// Written as `proceeds_source` beside the estimated proceeds (docs/reports.md, "Estimated proceeds").
    public static let proceedsSource =
        "estimate: ledger prices less Apple's commission (money.proceeds_estimate); taxes not estimated"
    /// `proceeds_source` of ledger money some of whose proceeds Apple's measured rates gave (docs/reports.md,
    /// "Calibrated proceeds").
    public static let calibratedProceedsSource =
        "calibrated: Apple's measured rate (tax and commission) of the storefront and tier from the Subscriber "
        + "reports (money.proceeds_calibration) for calibrated_transactions; the others estimated: ledger prices "
        + "less Apple's commission (money.proceeds_estimate), taxes not estimated"
    /// `proceeds_source` of catalog money.
    public static let catalogProceedsSource =
        "estimate: catalog prices less Apple's commission (money.proceeds_estimate); taxes not estimated"

    /// `source` of these figures: `LedgerCurrencyMoney.source` or `catalogSource`.
    public var source: String
    /// The storefront of ledger rows without one.
    public static let unknownStorefront = "(unknown)"

    public var totals: LedgerMoneyFigures
    /// Per product, sorted by product id.
    public var products: [LedgerMoneyFigures]
    /// Per storefront (`storefront` set), sorted by storefront.
    public var storefronts: [Storefront]

    /// One storefront's money in this currency, and its products.
    public struct Storefront: Sendable, Equatable {
        public var totals: LedgerMoneyFigures
        public var products: [LedgerMoneyFigures]
        public var storefront: String { totals.storefront ?? LedgerCurrencyMoney.unknownStorefront }
    }

    /// Builds the totals and the per-product and per-storefront lines from `lines`, one per product and
    /// storefront (`storefront` nil: unknown).
    public init(currency: String, lines: [LedgerMoneyFigures] = [], source: String = LedgerCurrencyMoney.source) {
        self.source = source
        var byProduct: [String: LedgerMoneyFigures] = [:]
        var byStorefront: [String: [LedgerMoneyFigures]] = [:]
        var totals = LedgerMoneyFigures(currency: currency)
        for line in lines {
            totals.add(line)
            let product = line.productId ?? ""
            byProduct[product, default: LedgerMoneyFigures(currency: currency, productId: line.productId)].add(line)
            byStorefront[line.storefront ?? Self.unknownStorefront, default: []].append(line)
        }
        self.totals = totals
        products = byProduct.values.sorted { $0.productId ?? "" < $1.productId ?? "" }
        storefronts = byStorefront.sorted { $0.key < $1.key }.map { storefront, lines in
            var sum = LedgerMoneyFigures(currency: currency, storefront: storefront)
            for line in lines { sum.add(line) }
            return Storefront(totals: sum, products: lines.sorted { $0.productId ?? "" < $1.productId ?? "" })
        }
    }

    public var currency: String { totals.currency }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: LedgerMoneyFigures.Key.self)
        source = try c.decodeIfPresent(String.self, forKey: .source) ?? Self.source
        totals = try LedgerMoneyFigures(from: c)
        products = try c.decode([LedgerMoneyFigures].self, forKey: .products)
        storefronts = []
        // Absent in summary.json files written before storefronts existed.
        guard c.contains(.storefronts) else { return }
        var list = try c.nestedUnkeyedContainer(forKey: .storefronts)
        while !list.isAtEnd {
            let s = try list.nestedContainer(keyedBy: LedgerMoneyFigures.Key.self)
            let sum = try LedgerMoneyFigures(from: s)
            storefronts.append(
                Storefront(totals: sum, products: try s.decode([LedgerMoneyFigures].self, forKey: .products))
            )
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: LedgerMoneyFigures.Key.self)
        try c.encode(source, forKey: .source)
        try c.encode(
            source == Self.catalogSource
                ? Self.catalogProceedsSource
                : totals.calibratedTransactions > 0 ? Self.calibratedProceedsSource : Self.proceedsSource,
            forKey: .proceedsSource
        )
        try totals.encode(into: &c)
        try c.encode(products, forKey: .products)
        var list = c.nestedUnkeyedContainer(forKey: .storefronts)
        for storefront in storefronts {
            var s = list.nestedContainer(keyedBy: LedgerMoneyFigures.Key.self)
            try storefront.totals.encode(into: &s)
            try s.encode(storefront.products, forKey: .products)
        }
    }
}
