/// An App Store storefront and its price list (docs/simulator.md, "Prices"): every family buys in one
/// storefront chosen by the seed; the Server API reports each transaction's customer price in milliunits of the
/// storefront's currency. Prices rose once, `priceRiseBefore` the anchor: earlier purchases paid the old price.
public struct Storefront: Sendable, Hashable {
    /// ISO 3166-1 alpha-3 code (`storefront`).
    public let code: String
    /// Apple's storefront id (`storefrontId`).
    public let id: String
    /// ISO 4217 currency (`currency`).
    public let currency: String
    /// ISO 3166-1 alpha-2 code: the `Country` of App Store Connect's reports.
    public var country: String { Self.alpha2[code] ?? "" }
    /// Current prices in milliunits: weekly, monthly, yearly, and the top-tier monthly.
    let prices: (week: Int64, month: Int64, year: Int64, plusMonth: Int64)
    /// The smallest amount of the currency in milliunits (10 for cents, 1000 for yen).
    let minorUnit: Int64
    /// The tax included in the storefront's customer prices, in percent of the price before tax (VAT, GST or
    /// consumption tax: 20 in the United Kingdom); 0 where the price excludes tax, which the store adds at checkout
    /// (the United States and Canada). Apple pays proceeds on the price less this tax (`ProceedsRule`).
    let taxPercent: Int64

    public static func == (a: Storefront, b: Storefront) -> Bool { a.code == b.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    public static let all: [Storefront] = [
        Storefront(
            code: "USA",
            id: "143441",
            currency: "USD",
            prices: (2990, 9990, 79990, 14990),
            minorUnit: 10,
            taxPercent: 0
        ),
        Storefront(
            code: "GBR",
            id: "143444",
            currency: "GBP",
            prices: (2490, 8990, 69990, 12990),
            minorUnit: 10,
            taxPercent: 20
        ),
        Storefront(
            code: "DEU",
            id: "143443",
            currency: "EUR",
            prices: (2990, 9990, 89990, 14990),
            minorUnit: 10,
            taxPercent: 19
        ),
        Storefront(
            code: "JPN",
            id: "143462",
            currency: "JPY",
            prices: (450_000, 1_500_000, 12_000_000, 2_200_000),
            minorUnit: 1000,
            taxPercent: 10
        ),
        Storefront(
            code: "CAN",
            id: "143455",
            currency: "CAD",
            prices: (3990, 12990, 109990, 19990),
            minorUnit: 10,
            taxPercent: 0
        ),
        Storefront(
            code: "BRA",
            id: "143503",
            currency: "BRL",
            prices: (14900, 49900, 399900, 74900),
            minorUnit: 10,
            taxPercent: 0
        ),
    ]

    /// How long before the anchor the prices rose (about 10%).
    public static let priceRiseBefore: Int64 = 150 * SimTime.day

    /// The family's storefront: USA for half the families, the others share the rest.
    public static func of(seed: UInt64, familyIndex: Int) -> Storefront {
        let h = SeededRandom.hash(seed, 0x570E, UInt64(familyIndex))
        if h % 2 == 0 { return all[0] }
        return all[1 + Int((h / 2) % UInt64(all.count - 1))]
    }

    /// List price of `product` for a purchase at `purchase` in a population built around `anchor`.
    public func listPrice(_ product: SimProduct, purchase: Int64, anchor: Int64) -> Int64 {
        let current: Int64
        switch product.period {
        case .week: current = prices.week
        case .month: current = product.productId.contains(".plus.") ? prices.plusMonth : prices.month
        case .year: current = prices.year
        }
        guard purchase < anchor - Self.priceRiseBefore else { return current }
        return current * 9 / 10 / minorUnit * minorUnit
    }

    /// What the customer paid for `t`: 0 for a free trial, half the list price (rounded down to the minor unit)
    /// during a pay-as-you-go offer period (introductory, offer code, promotional, win-back), else the list price
    /// (raised by a price increase the customer consented to).
    public func price(of t: SimTransaction, anchor: Int64) -> Int64 {
        if t.isTrial || t.offer?.discountType == SubscriptionOffer.freeTrial { return 0 }
        var list = listPrice(t.product, purchase: t.purchase, anchor: anchor)
        if t.priceIncreased { list = raised(list) }
        if t.isIntro || t.offer?.discountType == SubscriptionOffer.payAsYouGo { return introPrice(list: list) }
        return list
    }

    /// The list price after a price increase: 120%, rounded down to the minor unit.
    public func raised(_ list: Int64) -> Int64 {
        list * 12 / 10 / minorUnit * minorUnit
    }

    /// The pay-as-you-go introductory (or offer-code) price of a period listed at `list`: half, rounded down to
    /// the minor unit.
    public func introPrice(list: Int64) -> Int64 {
        list / 2 / minorUnit * minorUnit
    }

    private static let alpha2 = ["USA": "US", "GBR": "GB", "DEU": "DE", "JPN": "JP", "CAN": "CA", "BRA": "BR"]

    /// `decimal`, with a leading `-` for a negative amount (a refund's row in App Store Connect's reports).
    public func signedDecimal(_ milliunits: Int64) -> String {
        milliunits < 0 ? "-" + decimal(-milliunits) : decimal(milliunits)
    }

    /// `milliunits` as a plain decimal with the currency's minor-unit places (`9990` -> `9.99`, JPY `1500000` ->
    /// `1500`), as a price list writes it.
    public func decimal(_ milliunits: Int64) -> String {
        var places = 0
        var unit = minorUnit
        while unit < 1000 {
            unit *= 10
            places += 1
        }
        let whole = milliunits / 1000
        guard places > 0 else { return String(whole) }
        let fraction = String(milliunits % 1000 / minorUnit)
        return "\(whole)." + String(repeating: "0", count: max(0, places - fraction.count)) + fraction
    }
}
