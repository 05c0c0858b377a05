import Foundation
import ReceiptDomain
import Testing

@testable import Reconciler

/// A row belongs to the app its `bundle_id` names in any case (docs/operations.md, "Several apps"): the router
/// gives it that app's source, and a row of another app still ends `no_app`.
@Suite struct BundleIdRoutingTests {
    static func item(bundleId: String?) -> WorkItem {
        WorkItem(
            subscriptionId: 1,
            version: 1,
            stored: StoredSubscription(
                originalTransactionId: "1000000001",
                userId: "user-1",
                productId: "com.example.monthly",
                bundleId: bundleId
            ),
            receipt: "MIIT1",
            subscriptionGroupId: nil
        )
    }

    static func router(apps: [String], defaultApp: String?) -> AppRouterSource {
        let source = FakeSource(clock: VirtualClock(), budgets: [RateBudget(name: "verifyReceipt", rate: 10)])
        return AppRouterSource(
            sources: Dictionary(uniqueKeysWithValues: apps.map { ($0, source as any AppleSource) }),
            defaultApp: defaultApp
        )
    }

    @Test(arguments: ["com.example.News", "COM.EXAMPLE.NEWS", "com.example.news"])
    func aRowNamingTheAppInAnyCaseGoesToItsSource(rowBundleId: String) {
        let router = Self.router(apps: ["com.example.News", "com.example.pro"], defaultApp: nil)
        #expect(!(router.verification(for: Self.item(bundleId: rowBundleId)) is NoAppVerification))
    }

    @Test func aRowOfAnotherAppStillEndsNoApp() {
        let router = Self.router(apps: ["com.example.News"], defaultApp: "com.example.News")
        #expect(router.verification(for: Self.item(bundleId: "com.example.newsletter")) is NoAppVerification)
        #expect(!(router.verification(for: Self.item(bundleId: nil)) is NoAppVerification))
    }
}
