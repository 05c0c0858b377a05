import Foundation
import Testing

@testable import Reconciler

/// How a verifyReceipt transaction is priced with the catalog (docs/reports.md, "Money from the catalog"): the
/// subscription's currency chooses the row, the intro price applies during an introductory offer, and what cannot
/// be known is unpriced with its reason, never guessed.
@Suite struct CatalogPricingTests {
    let pricing = CatalogPricing(prices: [
        ProductPrice(
            productId: "pro",
            currency: "USD",
            price: Decimal(string: "9.99")!,
            period: "P1M",
            introPrice: Decimal(string: "4.99")
        ),
        ProductPrice(productId: "pro", currency: "JPY", price: 1500, period: "P1M", introPrice: 750),
        ProductPrice(productId: "news", currency: "EUR", price: Decimal(string: "2.99")!, period: "P1W"),
    ])

    func price(
        _ product: String,
        _ currency: String?,
        trial: Bool = false,
        intro: Bool = false
    ) -> CatalogPricing.Result {
        pricing.price(productId: product, subscriptionCurrency: currency, isTrial: trial, isIntroOffer: intro)
    }

    @Test func theSubscriptionsCurrencyChoosesTheRow() {
        #expect(price("pro", "USD") == .priced(currency: "USD", milliunits: 9990))
        #expect(price("pro", "JPY") == .priced(currency: "JPY", milliunits: 1_500_000))
        #expect(price("pro", "USD", intro: true) == .priced(currency: "USD", milliunits: 4990))
        #expect(price("pro", "JPY", intro: true) == .priced(currency: "JPY", milliunits: 750_000))
        #expect(price("pro", "USD", trial: true) == .priced(currency: "USD", milliunits: 0))
    }

    @Test func whatCannotBeKnownIsUnpricedWithItsReason() {
        #expect(price("pro", nil) == .unpriced(.currencyUnknown))
        #expect(price("pro", "GBP") == .unpriced(.notInCurrency))
        #expect(price("team", "USD") == .unpriced(.noCatalogPrice))
        #expect(price("news", "EUR", intro: true) == .unpriced(.noIntroPrice))
    }

    @Test func aProductInOneCurrencyNeedsNoStoredCurrency() {
        #expect(price("news", nil) == .priced(currency: "EUR", milliunits: 2990))
        #expect(price("news", "USD") == .unpriced(.notInCurrency))
    }
}
