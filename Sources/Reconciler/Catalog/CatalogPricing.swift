import Foundation

/// How a transaction read through verifyReceipt (no price, currency or storefront) is priced with the `products`
/// catalog (docs/reports.md, "Money from the catalog"): the one rule, used by the reports and by the demo's
/// comparison with the simulator.
///
/// - The currency is the subscription's (`subscriptions.currency`, what the app stored); when unknown, the
///   product's only catalog currency; when the catalog lists the product in several currencies and the
///   subscription's is unknown, the transaction is **ambiguous** and not priced.
/// - The price is the catalog `price` of the product in that currency, or its `intro_price` for a transaction in
///   an introductory offer period (`is_in_intro_offer_period`); a free trial is 0.
/// - Amounts are in milliunits, the catalog price rounded to the currency's minor unit (`CurrencyFormat.rounded`;
///   `products import` accepts no finer price, so this only ever rounds rows written by hand).
public struct CatalogPricing: Sendable {
    /// Why a transaction has no catalog price. Raw values are written in summary.json.
    public enum Unpriced: String, Sendable, CaseIterable, Codable {
        /// The product has no row in the catalog.
        case noCatalogPrice = "no_catalog_price"
        /// The catalog lists the product in several currencies and the subscription's currency is unknown.
        case currencyUnknown = "currency_unknown"
        /// The catalog has no row of the product in the subscription's currency.
        case notInCurrency = "no_price_in_currency"
        /// An introductory-offer transaction, and the catalog row has no `intro_price`.
        case noIntroPrice = "no_intro_price"
    }

    /// A transaction's catalog price, or why it has none.
    public enum Result: Sendable, Equatable {
        case priced(currency: String, milliunits: Int64)
        case unpriced(Unpriced)
    }

    private let byProduct: [String: [String: ProductPrice]]

    public init(prices: [ProductPrice]) {
        var byProduct: [String: [String: ProductPrice]] = [:]
        for price in prices { byProduct[price.productId, default: [:]][price.currency] = price }
        self.byProduct = byProduct
    }

    /// The catalog price of a transaction of `productId` in a subscription whose stored currency is
    /// `subscriptionCurrency` (nil: unknown).
    public func price(
        productId: String,
        subscriptionCurrency: String?,
        isTrial: Bool,
        isIntroOffer: Bool
    ) -> Result {
        guard let rows = byProduct[productId], !rows.isEmpty else { return .unpriced(.noCatalogPrice) }
        let row: ProductPrice
        if let currency = subscriptionCurrency {
            guard let match = rows[currency] else { return .unpriced(.notInCurrency) }
            row = match
        } else {
            guard rows.count == 1, let only = rows.values.first else { return .unpriced(.currencyUnknown) }
            row = only
        }
        if isTrial { return .priced(currency: row.currency, milliunits: 0) }
        if isIntroOffer {
            guard let intro = row.introPrice else { return .unpriced(.noIntroPrice) }
            return .priced(currency: row.currency, milliunits: Self.milliunits(intro, currency: row.currency))
        }
        return .priced(currency: row.currency, milliunits: Self.milliunits(row.price, currency: row.currency))
    }

    /// A catalog price in milliunits of `currency`, rounded to its minor unit.
    static func milliunits(_ price: Decimal, currency: String) -> Int64 {
        CurrencyFormat.rounded(price * 1000, currency: currency)
    }
}
