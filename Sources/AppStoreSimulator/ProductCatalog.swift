/// The products the population buys, built from the app's bundle id.
///
/// Two groups: "pro" (monthly and yearly at level 2, plus.monthly at level 1, so monthly -> plus is an
/// upgrade and yearly <-> monthly a crossgrade) and "news" (weekly, monthly, yearly).
public struct ProductCatalog: Sendable {
    public let proMonthly: SimProduct
    public let proYearly: SimProduct
    public let proPlusMonthly: SimProduct
    public let newsWeekly: SimProduct
    public let newsMonthly: SimProduct
    public let newsYearly: SimProduct

    public init(bundleId: String, groupBase: Int) {
        proMonthly = SimProduct(
            productId: bundleId + ".pro.monthly",
            groupId: String(groupBase + 1),
            period: .month,
            level: 2
        )
        proYearly = SimProduct(
            productId: bundleId + ".pro.yearly",
            groupId: String(groupBase + 1),
            period: .year,
            level: 2
        )
        proPlusMonthly = SimProduct(
            productId: bundleId + ".pro.plus.monthly",
            groupId: String(groupBase + 1),
            period: .month,
            level: 1
        )
        newsWeekly = SimProduct(
            productId: bundleId + ".news.weekly",
            groupId: String(groupBase + 2),
            period: .week,
            level: 1
        )
        newsMonthly = SimProduct(
            productId: bundleId + ".news.monthly",
            groupId: String(groupBase + 2),
            period: .month,
            level: 1
        )
        newsYearly = SimProduct(
            productId: bundleId + ".news.yearly",
            groupId: String(groupBase + 2),
            period: .year,
            level: 1
        )
    }

    /// Every product, in a fixed order.
    public var all: [SimProduct] { [proMonthly, proYearly, proPlusMonthly, newsWeekly, newsMonthly, newsYearly] }

    /// The product's Apple id in App Store Connect (the reports' `Subscription Apple ID` and `Apple Identifier`):
    /// ten digits from its group and its place in `all`.
    public func appleId(of product: SimProduct) -> String {
        let place = all.firstIndex(of: product) ?? 9
        return String(6_000_000_000 + (Int(product.groupId) ?? 0) * 10 + place)
    }

    /// A product chosen with realistic weights (monthly most common).
    func pick(_ rng: inout SeededRandom) -> SimProduct {
        let u = rng.unit()
        if u < 0.35 { return proMonthly }
        if u < 0.55 { return proYearly }
        if u < 0.70 { return newsWeekly }
        if u < 0.90 { return newsMonthly }
        return newsYearly
    }

    /// Same as `pick` without yearly products (for scenarios whose dates must land in a short window).
    func pickShort(_ rng: inout SeededRandom) -> SimProduct {
        let u = rng.unit()
        if u < 0.5 { return proMonthly }
        if u < 0.75 { return newsMonthly }
        return newsWeekly
    }
}
