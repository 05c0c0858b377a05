import Testing

@testable import AppStoreSimulator

/// The simulator's proceeds (docs/simulator.md, "App Store Connect reports"): the price without the tax it includes,
/// less 30% (15% after a year of paid service), rounded once to the minor unit, half away from zero.
@Suite struct ProceedsRuleTests {
    func storefront(_ code: String) throws -> Storefront {
        try #require(Storefront.all.first { $0.code == code })
    }

    @Test func pricesWithoutTaxPaySeventyOrEightyFivePercent() throws {
        let usa = try storefront("USA")
        #expect(ProceedsRule.proceeds(of: 9990, afterOneYear: false, storefront: usa) == 6990)  // 6.993
        #expect(ProceedsRule.proceeds(of: 9990, afterOneYear: true, storefront: usa) == 8490)  // 8.4915
        #expect(ProceedsRule.proceeds(of: -9990, afterOneYear: false, storefront: usa) == -6990)
        #expect(ProceedsRule.proceeds(of: 0, afterOneYear: false, storefront: usa) == 0)
    }

    @Test func pricesThatIncludeTaxPayOnThePriceWithoutIt() throws {
        // 8.99 GBP with 20% VAT: 7.4917 before tax, 5.2442 after 30%.
        #expect(ProceedsRule.proceeds(of: 8990, afterOneYear: false, storefront: try storefront("GBR")) == 5240)
        // 9.99 EUR with 19% VAT: 8.3950 before tax, 7.1357 after 15%.
        #expect(ProceedsRule.proceeds(of: 9990, afterOneYear: true, storefront: try storefront("DEU")) == 7140)
        // 1,500 JPY with 10% consumption tax: 954.545... rounds to 955 yen; a refund of it to -955.
        #expect(ProceedsRule.proceeds(of: 1_500_000, afterOneYear: false, storefront: try storefront("JPN")) == 955_000)
        #expect(
            ProceedsRule.proceeds(of: -1_500_000, afterOneYear: false, storefront: try storefront("JPN")) == -955_000
        )
    }
}
