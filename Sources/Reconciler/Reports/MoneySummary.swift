import Foundation

/// The money of one run: the real money per currency from the prices Apple signed into the ledger (`byCurrency`,
/// App Store Server API rows), and the money of the rows read through verifyReceipt, which carry no price, priced
/// with the `products` catalog (`catalog`; `CatalogPricing`). No transaction is in both. Each is labelled with its
/// source; what the catalog cannot price is counted in `catalogUnpriced`, never given an invented amount.
///
/// `renewalRevenue`, `refunded`, `products`, `productsWithoutPrice` and `productsWithSeveralCurrencies` are the
/// catalog money's older keys, derived from `catalog` and kept for scripts (docs/reports.md, "Money from the
/// catalog").
public struct MoneySummary: Sendable, Equatable, Codable {
    /// Where the catalog figures come from, written as `source` beside each of them.
    public static let catalogSource = LedgerCurrencyMoney.catalogSource

    /// One amount in one currency.
    public struct Amount: Sendable, Equatable, Codable {
        public var currency: String
        /// Decimal string, e.g. `"29.97"`.
        public var amount: String
        /// Number of transactions it covers.
        public var transactions: Int
        /// Always `MoneySummary.catalogSource`.
        public var source: String

        public init(currency: String, amount: String, transactions: Int, source: String = MoneySummary.catalogSource) {
            self.currency = currency
            self.amount = amount
            self.transactions = transactions
            self.source = source
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            currency = try c.decode(String.self, forKey: .currency)
            amount = try c.decode(String.self, forKey: .amount)
            transactions = try c.decode(Int.self, forKey: .transactions)
            source = try c.decodeIfPresent(String.self, forKey: .source) ?? MoneySummary.catalogSource
        }
    }

    /// One product's line: counts, and its price and estimates per currency where known.
    public struct ProductLine: Sendable, Equatable, Codable {
        public var productId: String
        /// Paid purchases of the period priced with the catalog (the key keeps its older name).
        public var paidRenewals: Int
        /// Refunds of the period priced with the catalog.
        public var paidRefunds: Int
        /// Of those, purchases in an introductory offer period, valued at the catalog's `intro_price`.
        public var introOfferRenewals: Int
        public var prices: [Price]

        enum CodingKeys: String, CodingKey {
            case productId = "product_id"
            case paidRenewals = "paid_renewals"
            case paidRefunds = "paid_refunds"
            case introOfferRenewals = "intro_offer_renewals"
            case prices
        }
    }

    /// A product's price in one currency and what it gives for this run.
    public struct Price: Sendable, Equatable, Codable {
        public var currency: String
        public var price: String
        public var period: String
        public var renewalRevenue: String
        public var refunded: String

        enum CodingKeys: String, CodingKey {
            case currency, price, period
            case renewalRevenue = "renewal_revenue"
            case refunded
        }
    }

    /// Catalog gross per currency: paid purchases of the period (the key keeps its older name).
    public var renewalRevenue: [Amount]
    /// Catalog refunds per currency, valued in full.
    public var refunded: [Amount]
    /// Products with purchases or refunds in the period but no row in `products`.
    public var productsWithoutPrice: [String]
    /// Products the catalog lists in several currencies whose subscription's currency is unknown: not priced.
    public var productsWithSeveralCurrencies: [String]
    public var products: [ProductLine]
    /// Real money per currency from ledger prices (empty for verifyReceipt-only runs).
    public var byCurrency: MoneyByCurrency
    /// Ledger money dated before the period that this run found (a first reconciliation, a late answer): shown
    /// apart, never as the period's (docs/reports.md, "The period").
    public var historyFound: MoneyByCurrency
    /// The period's money of rows without a signed price (verifyReceipt), priced with the catalog, in the same
    /// shape as `byCurrency` (docs/reports.md, "Money from the catalog").
    public var catalog: MoneyByCurrency
    /// The period's verifyReceipt purchases and refunds the catalog could not price, per product and reason.
    public var catalogUnpriced: [CatalogUnpricedLine]
    /// The commission the estimated proceeds of `byCurrency` and `historyFound` use, and their label
    /// (docs/reports.md, "Estimated proceeds").
    public var proceedsEstimate: CommissionPolicy
    /// Apple's measured proceeds rates the estimates used where they knew one (docs/reports.md, "Calibrated
    /// proceeds"); empty without imported Subscriber reports.
    public var proceedsCalibration: ProceedsCalibration
    /// The period's ledger money converted with the user's rates (`--fx-rates`); nil without them.
    public var converted: ConvertedMoney?

    enum CodingKeys: String, CodingKey {
        case renewalRevenue = "renewal_revenue"
        case refunded
        case productsWithoutPrice = "products_without_price"
        case productsWithSeveralCurrencies = "products_with_several_currencies"
        case products
        case byCurrency = "by_currency"
        case historyFound = "history_found_by_currency"
        case catalog = "catalog_by_currency"
        case catalogUnpriced = "catalog_unpriced"
        case proceedsEstimate = "proceeds_estimate"
        case proceedsCalibration = "proceeds_calibration"
        case converted
    }

    /// Reads the newer keys as empty when absent (summary.json files written before they existed).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        renewalRevenue = try c.decode([Amount].self, forKey: .renewalRevenue)
        refunded = try c.decode([Amount].self, forKey: .refunded)
        productsWithoutPrice = try c.decode([String].self, forKey: .productsWithoutPrice)
        productsWithSeveralCurrencies = try c.decode([String].self, forKey: .productsWithSeveralCurrencies)
        products = try c.decode([ProductLine].self, forKey: .products)
        byCurrency = try c.decodeIfPresent(MoneyByCurrency.self, forKey: .byCurrency) ?? MoneyByCurrency()
        historyFound = try c.decodeIfPresent(MoneyByCurrency.self, forKey: .historyFound) ?? MoneyByCurrency()
        catalog = try c.decodeIfPresent(MoneyByCurrency.self, forKey: .catalog) ?? MoneyByCurrency()
        catalogUnpriced = try c.decodeIfPresent([CatalogUnpricedLine].self, forKey: .catalogUnpriced) ?? []
        proceedsEstimate = try c.decodeIfPresent(CommissionPolicy.self, forKey: .proceedsEstimate) ?? .standard
        proceedsCalibration =
            try c.decodeIfPresent(ProceedsCalibration.self, forKey: .proceedsCalibration) ?? .none
        converted = try c.decodeIfPresent(ConvertedMoney.self, forKey: .converted)
    }

    /// Every key, `converted` as null without rates.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(renewalRevenue, forKey: .renewalRevenue)
        try c.encode(refunded, forKey: .refunded)
        try c.encode(productsWithoutPrice, forKey: .productsWithoutPrice)
        try c.encode(productsWithSeveralCurrencies, forKey: .productsWithSeveralCurrencies)
        try c.encode(products, forKey: .products)
        try c.encode(byCurrency, forKey: .byCurrency)
        try c.encode(historyFound, forKey: .historyFound)
        try c.encode(catalog, forKey: .catalog)
        try c.encode(catalogUnpriced, forKey: .catalogUnpriced)
        try c.encode(proceedsEstimate, forKey: .proceedsEstimate)
        try c.encode(proceedsCalibration, forKey: .proceedsCalibration)
        try c.encode(converted, forKey: .converted)
    }

    /// The run's money: `byCurrency` and `historyFound` from the ledger's prices, `catalog` from the catalog
    /// `prices` (with `catalogIntroPurchases`, per product its intro-offer purchases in `catalog`), and what the
    /// catalog could not price.
    public init(
        catalog: MoneyByCurrency = MoneyByCurrency(),
        catalogUnpriced: [CatalogUnpricedLine] = [],
        catalogIntroPurchases: [String: Int] = [:],
        prices: [ProductPrice] = [],
        byCurrency: MoneyByCurrency = MoneyByCurrency(),
        historyFound: MoneyByCurrency = MoneyByCurrency(),
        proceedsEstimate: CommissionPolicy = .standard,
        proceedsCalibration: ProceedsCalibration = .none,
        fxRates: FXRates? = nil
    ) {
        converted = fxRates.map { ConvertedMoney(byCurrency, rates: $0) }
        self.byCurrency = byCurrency
        self.historyFound = historyFound
        self.proceedsEstimate = proceedsEstimate
        self.proceedsCalibration = proceedsCalibration
        self.catalog = catalog
        self.catalogUnpriced = catalogUnpriced.sorted {
            ($0.productId, $0.reason.rawValue) < ($1.productId, $1.reason.rawValue)
        }
        let totals = catalog.codes.compactMap { catalog.currencies[$0]?.totals }
        renewalRevenue = totals.filter { $0.paidTransactions > 0 }.map {
            Amount(currency: $0.currency, amount: $0.gross, transactions: $0.paidTransactions)
        }
        refunded = totals.filter { $0.refunds > 0 }.map {
            Amount(currency: $0.currency, amount: $0.refunded, transactions: $0.refunds)
        }
        productsWithoutPrice = Array(
            Set(catalogUnpriced.filter { $0.reason == .noCatalogPrice }.map(\.productId))
        ).sorted()
        productsWithSeveralCurrencies = Array(
            Set(catalogUnpriced.filter { $0.reason == .currencyUnknown }.map(\.productId))
        ).sorted()
        let rows = Dictionary(prices.map { ($0.productId + "\u{0}" + $0.currency, $0) }) { first, _ in first }
        var lines: [String: ProductLine] = [:]
        for code in catalog.codes {
            for figures in catalog.currencies[code]?.products ?? [] {
                let id = figures.productId ?? ""
                var line =
                    lines[id]
                    ?? ProductLine(
                        productId: id,
                        paidRenewals: 0,
                        paidRefunds: 0,
                        introOfferRenewals: catalogIntroPurchases[id] ?? 0,
                        prices: []
                    )
                line.paidRenewals += figures.paidTransactions
                line.paidRefunds += figures.refunds
                let row = rows[id + "\u{0}" + code]
                line.prices.append(
                    Price(
                        currency: code,
                        price: row.map { Self.format($0.price) } ?? "",
                        period: row?.period ?? "",
                        renewalRevenue: figures.gross,
                        refunded: figures.refunded
                    )
                )
                lines[id] = line
            }
        }
        products = lines.values.sorted { $0.productId < $1.productId }
    }

    /// Two decimal places at least (money), more only when the catalog price has them: `29.97`, `0.00`, `1.2345`.
    public static func format(_ value: Decimal) -> String {
        var scaled = value
        var rounded = Decimal()
        NSDecimalRound(&rounded, &scaled, 4, .bankers)
        var text = "\(rounded)"
        if !text.contains(".") { text += ".00" }
        let parts = text.split(separator: ".", maxSplits: 1)
        if parts.count == 2, parts[1].count < 2 {
            text = "\(parts[0]).\(parts[1])" + String(repeating: "0", count: 2 - parts[1].count)
        }
        return text
    }
}
