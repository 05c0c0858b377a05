/// Transactions of one product, read through verifyReceipt in the run's period, that the catalog could not price,
/// and why (`CatalogPricing.Unpriced`): counted here, never given an invented amount. One element of
/// `money.catalog_unpriced` in summary.json (docs/reports.md, "Money from the catalog").
public struct CatalogUnpricedLine: Sendable, Equatable, Codable {
    struct Key: Hashable, Sendable {
        var productId: String
        var reason: CatalogPricing.Unpriced
    }

    public var productId: String
    public var reason: CatalogPricing.Unpriced
    /// Paid purchases dated in the period.
    public var purchases = 0
    /// Refunds dated in the period.
    public var refunds = 0

    public init(productId: String, reason: CatalogPricing.Unpriced, purchases: Int = 0, refunds: Int = 0) {
        self.productId = productId
        self.reason = reason
        self.purchases = purchases
        self.refunds = refunds
    }

    enum CodingKeys: String, CodingKey {
        case productId = "product_id"
        case reason, purchases, refunds
    }

    /// What the reason means, for report.html and the terminal.
    public var explanation: String {
        switch reason {
        case .noCatalogPrice: return "no row in the products catalog"
        case .currencyUnknown:
            return "the catalog lists it in several currencies and the subscription's currency is unknown"
        case .notInCurrency: return "no catalog price in the subscription's currency"
        case .noIntroPrice: return "introductory offer, and the catalog has no intro_price"
        }
    }
}
