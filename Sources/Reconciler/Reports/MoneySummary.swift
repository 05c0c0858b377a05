import Foundation

/// The money of one run: estimated renewal revenue and refunded amounts per currency from the `products`
/// catalog (verifyReceipt rows, which carry no price), and the real money per currency from the prices
/// Apple signed into the ledger (`byCurrency`, App Store Server API rows). No transaction is in both.
///
/// Catalog amounts are exact `Decimal`s (count x catalog price), written as decimal strings. Products without a
/// price are listed by name instead of being given an invented figure.
public struct MoneySummary: Sendable, Equatable, Codable {
    /// Where the catalog figures come from, written as `source` beside each of them.
    public static let catalogSource = "catalog (products table)"

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
        public var paidRenewals: Int
        public var paidRefunds: Int
        /// Paid renewals bought with an introductory offer: valued at the catalog price (an overestimate).
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

    public var renewalRevenue: [Amount]
    public var refunded: [Amount]
    /// Products with paid renewals or refunds in this run but no row in `products`.
    public var productsWithoutPrice: [String]
    /// Products priced in more than one currency: counted once in each (verifyReceipt does not say
    /// which storefront a transaction was billed in).
    public var productsWithSeveralCurrencies: [String]
    public var products: [ProductLine]
    /// Real money per currency from ledger prices (empty for verifyReceipt-only runs).
    public var byCurrency: MoneyByCurrency
    /// Ledger money dated before the period that this run found (a first reconciliation, a late answer): shown
    /// apart, never as the period's (docs/reports.md, "The period").
    public var historyFound: MoneyByCurrency
    /// The commission the estimated proceeds of `byCurrency` and `historyFound` use, and their label
    /// (docs/reports.md, "Estimated proceeds").
    public var proceedsEstimate: CommissionPolicy
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
        case proceedsEstimate = "proceeds_estimate"
        case converted
    }

    /// Reads `by_currency` as empty when absent (summary.json files written before it existed).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        renewalRevenue = try c.decode([Amount].self, forKey: .renewalRevenue)
        refunded = try c.decode([Amount].self, forKey: .refunded)
        productsWithoutPrice = try c.decode([String].self, forKey: .productsWithoutPrice)
        productsWithSeveralCurrencies = try c.decode([String].self, forKey: .productsWithSeveralCurrencies)
        products = try c.decode([ProductLine].self, forKey: .products)
        byCurrency = try c.decodeIfPresent(MoneyByCurrency.self, forKey: .byCurrency) ?? MoneyByCurrency()
        historyFound = try c.decodeIfPresent(MoneyByCurrency.self, forKey: .historyFound) ?? MoneyByCurrency()
        proceedsEstimate = try c.decodeIfPresent(CommissionPolicy.self, forKey: .proceedsEstimate) ?? .standard
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
        try c.encode(proceedsEstimate, forKey: .proceedsEstimate)
        try c.encode(converted, forKey: .converted)
    }

    /// Computes the catalog estimates from per-product counts of paid renewals (of which bought with an
    /// introductory offer) and paid refunds seen in the run, with the catalog `prices`; `byCurrency` is the
    /// ledger money, computed apart.
    public init(
        paidRenewals renewals: [String: Int],
        introOfferRenewals intro: [String: Int],
        paidRefunds refunds: [String: Int],
        prices: [ProductPrice],
        byCurrency: MoneyByCurrency = MoneyByCurrency(),
        historyFound: MoneyByCurrency = MoneyByCurrency(),
        proceedsEstimate: CommissionPolicy = .standard,
        fxRates: FXRates? = nil
    ) {
        converted = fxRates.map { ConvertedMoney(byCurrency, rates: $0) }
        self.byCurrency = byCurrency
        self.historyFound = historyFound
        self.proceedsEstimate = proceedsEstimate
        let pricesByProduct = Dictionary(grouping: prices, by: \.productId)
        var revenueByCurrency: [String: (Decimal, Int)] = [:]
        var refundedByCurrency: [String: (Decimal, Int)] = [:]
        var lines: [ProductLine] = []
        var missing: [String] = []
        for productId in Set(renewals.keys).union(refunds.keys).sorted() {
            let renewalCount = renewals[productId] ?? 0
            let refundCount = refunds[productId] ?? 0
            let productPrices = (pricesByProduct[productId] ?? []).sorted { $0.currency < $1.currency }
            if productPrices.isEmpty { missing.append(productId) }
            var priceLines: [Price] = []
            for price in productPrices {
                let revenue = price.price * Decimal(renewalCount)
                let refunded = price.price * Decimal(refundCount)
                if renewalCount > 0 {
                    let current = revenueByCurrency[price.currency] ?? (0, 0)
                    revenueByCurrency[price.currency] = (current.0 + revenue, current.1 + renewalCount)
                }
                if refundCount > 0 {
                    let current = refundedByCurrency[price.currency] ?? (0, 0)
                    refundedByCurrency[price.currency] = (current.0 + refunded, current.1 + refundCount)
                }
                priceLines.append(
                    Price(
                        currency: price.currency,
                        price: Self.format(price.price),
                        period: price.period,
                        renewalRevenue: Self.format(revenue),
                        refunded: Self.format(refunded)
                    )
                )
            }
            lines.append(
                ProductLine(
                    productId: productId,
                    paidRenewals: renewalCount,
                    paidRefunds: refundCount,
                    introOfferRenewals: intro[productId] ?? 0,
                    prices: priceLines
                )
            )
        }
        renewalRevenue = revenueByCurrency.sorted { $0.key < $1.key }.map {
            Amount(currency: $0.key, amount: Self.format($0.value.0), transactions: $0.value.1)
        }
        refunded = refundedByCurrency.sorted { $0.key < $1.key }.map {
            Amount(currency: $0.key, amount: Self.format($0.value.0), transactions: $0.value.1)
        }
        productsWithoutPrice = missing
        productsWithSeveralCurrencies = lines.filter { $0.prices.count > 1 }.map(\.productId)
        products = lines
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
