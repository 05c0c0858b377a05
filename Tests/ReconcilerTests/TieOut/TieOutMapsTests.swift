import AppStoreSimulator
import Reconciler
import Testing

/// The tie-out's two maps (docs/tie-out.md, "Products: the Apple ID map", "Storefronts and countries").
@Suite struct TieOutMapsTests {
    @Test func everyAppleStorefrontHasItsISOAlpha2CodeAndAnUnknownOneIsNamed() {
        #expect(StorefrontCountry.alpha2.count == 175)
        #expect(StorefrontCountry.country(ofStorefront: "USA") == "US")
        #expect(StorefrontCountry.country(ofStorefront: "GBR") == "GB")
        #expect(StorefrontCountry.country(ofStorefront: "CHE") == "CH")
        #expect(StorefrontCountry.country(ofStorefront: "KOR") == "KR")
        #expect(StorefrontCountry.country(ofStorefront: "XKS") == "XK")
        #expect(StorefrontCountry.country(ofStorefront: "usa") == "US")
        #expect(StorefrontCountry.country(ofStorefront: "ZZZ") == "unknown:ZZZ")
        #expect(StorefrontCountry.country(ofStorefront: nil) == "unknown:none")
        #expect(StorefrontCountry.country(ofStorefront: "") == "unknown:none")
        // Alpha-2 codes are two capitals and never repeat.
        let codes = Array(StorefrontCountry.alpha2.values)
        #expect(Set(codes).count == codes.count)
        #expect(codes.allSatisfy { $0.count == 2 && $0.allSatisfy(\.isUppercase) })
    }

    @Test func theSimulatorsStorefrontsAgreeWithTheTable() {
        // The simulator keeps its own map (an independent witness): every storefront it sells in agrees.
        #expect(!Storefront.all.isEmpty)
        for storefront in Storefront.all {
            #expect(
                StorefrontCountry.country(ofStorefront: storefront.code) == storefront.country,
                "\(storefront.code)"
            )
        }
    }

    @Test func theCatalogsAppleIdsComeFirstTheFinancialReportsFillTheRestAndConflictsAreNamed() {
        let map = ProductAppleIds(
            catalog: [(appleId: "6400000001", productId: "pro.monthly")],
            financial: [
                (appleId: "6400000001", productId: "pro.monthly.old"),  // the catalog wins
                (appleId: "6400000002", productId: "pro.yearly"),
                (appleId: "6400000003", productId: "b.product"),
                (appleId: "6400000003", productId: "a.product"),
            ]
        )
        #expect(map.productId(of: "6400000001") == "pro.monthly")
        #expect(map.entries["6400000001"]?.source == .catalog)
        #expect(map.productId(of: "6400000002") == "pro.yearly")
        #expect(map.entries["6400000002"]?.source == .financialReport)
        #expect(map.productId(of: "6400000003") == "a.product")
        #expect(map.conflicts == ["6400000003": ["a.product", "b.product"]])
        #expect(map.productId(of: "6499999999") == nil)
    }
}
