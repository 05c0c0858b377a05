import Foundation

@testable import Reconciler

/// A run with one item per outcome (plus a pending one), ledger rows of every kind, and a partial
/// price catalog: shared by the report tests (pure and DB-backed) so both check the same scenario.
enum ReportSampleData {
    static let hostileUserId = "=HYPERLINK(\"http://x\",\"y\")"
    static let htmlUserId = "<script>alert(1)</script>"
    static let asOf = Date(timeIntervalSince1970: 1_714_521_600)  // 2024-05-01T00:00:00Z
    static let backwardsRefundReason =
        "transaction 2000005 was refunded/revoked at 2024-04-30T21:36:00Z: expiry moves back from "
        + "2024-05-21T00:00:00Z to 2024-04-30T21:36:00Z"
    static let backwardsUpgradeReason =
        "Apple's answer has an earlier expiry than the stored row (nothing refunded): expiry moves back from "
        + "2024-05-06T00:00:00Z to 2024-05-03T00:00:00Z, product pro.monthly -> pro.yearly"

    static func date(_ days: Double, _ base: Date = asOf) -> Date { base.addingTimeInterval(days * 86_400) }

    static func data(
        runId: Int64 = 42,
        dryRun: Bool = false,
        status: String = "completed",
        exitCode: Int? = 0
    )
        -> ReportData
    {
        let run = ReportRun(
            id: runId,
            mode: "nightly",
            dryRun: dryRun,
            status: status,
            asOf: asOf,
            startedAt: asOf.addingTimeInterval(120),
            finishedAt: asOf.addingTimeInterval(420),
            dueCount: 11,
            doneCount: 10,
            unresolvedCount: 1,
            exitCode: exitCode,
            appleStats: appleStats()
        )
        return ReportData(run: run, items: items(), transactions: transactions(), prices: prices())
    }

    static func appleStats() -> AppleRequestStats {
        var stats = AppleRequestStats()
        stats.requests = 14
        stats.retries = 3
        stats.byHTTPStatus = ["200": 13, "503": 1]
        stats.byAppleStatus = ["0": 11, "21002": 2]
        stats.transportErrors = ["timeout": 1]
        stats.elapsedSeconds = 300
        stats.achievedRate = 0.0467
        return stats
    }

    static func items() -> [ReportItem] {
        [
            ReportItem(
                subscriptionId: 1,
                originalTransactionId: "1000001",
                outcome: "renewed",
                userId: hostileUserId,
                previousState: "active",
                newState: "active",
                previousExpiresAt: date(-1),
                newExpiresAt: date(29),
                previousProductId: "pro.monthly",
                productId: "pro.monthly",
                subscriptionGroupId: "g1",
                autoRenew: true,
                previousAutoRenew: true,
                autoRenewProductId: "pro.monthly",
                environment: "Production",
                appleStatus: 0,
                attempts: 1
            ),
            ReportItem(
                subscriptionId: 2,
                originalTransactionId: "1000002",
                outcome: "unchanged",
                userId: "u2",
                previousState: "active",
                newState: "active",
                previousExpiresAt: date(10),
                newExpiresAt: date(10),
                previousProductId: "pro.monthly",
                productId: "pro.monthly",
                subscriptionGroupId: "g1",
                autoRenew: true,
                previousAutoRenew: true,
                environment: "Production",
                appleStatus: 0,
                attempts: 1
            ),
            ReportItem(
                subscriptionId: 3,
                originalTransactionId: "1000003",
                outcome: "lapsed",
                userId: htmlUserId,
                previousState: "active",
                newState: "expired",
                previousExpiresAt: date(-2),
                newExpiresAt: date(-2),
                previousProductId: "pro.yearly",
                productId: "pro.yearly",
                subscriptionGroupId: "g1",
                autoRenew: false,
                previousAutoRenew: true,
                environment: "Production",
                appleStatus: 0,
                attempts: 1,
                lastTransactionWasTrial: true
            ),
            ReportItem(
                subscriptionId: 4,
                originalTransactionId: "1000004",
                outcome: "recovered",
                userId: "u4",
                previousState: "billing_retry",
                newState: "active",
                previousExpiresAt: date(-5),
                newExpiresAt: date(25),
                previousProductId: "pro.monthly",
                productId: "pro.monthly",
                subscriptionGroupId: "g1",
                autoRenew: true,
                previousAutoRenew: true,
                environment: "Production",
                appleStatus: 0,
                attempts: 2
            ),
            ReportItem(
                subscriptionId: 5,
                originalTransactionId: "1000005",
                outcome: "revoked",
                userId: "u5",
                previousState: "active",
                newState: "revoked",
                previousExpiresAt: date(20),
                newExpiresAt: date(-0.1),
                previousProductId: "pro.monthly",
                productId: "pro.monthly",
                subscriptionGroupId: "g1",
                autoRenew: false,
                previousAutoRenew: true,
                environment: "Production",
                appleStatus: 0,
                attempts: 1,
                reason: backwardsRefundReason,
                expiryMovedBackwards: true
            ),
            ReportItem(
                subscriptionId: 6,
                originalTransactionId: "1000006",
                outcome: "changed",
                userId: "-u6",
                previousState: "active",
                newState: "active",
                previousExpiresAt: date(5),
                newExpiresAt: date(2),
                previousProductId: "pro.monthly",
                productId: "pro.yearly",
                subscriptionGroupId: "g1",
                autoRenew: true,
                previousAutoRenew: true,
                autoRenewProductId: "pro.yearly",
                environment: "Sandbox",
                appleStatus: 0,
                attempts: 1,
                reason: backwardsUpgradeReason,
                expiryMovedBackwards: true
            ),
            ReportItem(
                subscriptionId: 7,
                originalTransactionId: "1000007",
                outcome: "rejected",
                userId: "u7",
                previousState: "active",
                newState: "active",
                previousExpiresAt: date(3),
                newExpiresAt: date(3),
                previousProductId: "pro.monthly",
                productId: "pro.monthly",
                appleStatus: 21003,
                attempts: 1,
                reason: "Apple status 21003: receipt could not be authenticated"
            ),
            ReportItem(
                subscriptionId: 8,
                originalTransactionId: "1000008",
                outcome: "unresolved",
                userId: "@u8",
                previousState: "grace_period",
                previousExpiresAt: date(-1),
                previousProductId: "team.monthly",
                appleStatus: 21002,
                attempts: 5,
                reason: "21002 after 5 attempts, \"try again\", later"
            ),
            ReportItem(
                subscriptionId: 9,
                originalTransactionId: "1000009",
                outcome: "conflict",
                userId: "u9",
                previousState: "active",
                previousExpiresAt: date(2),
                previousProductId: "pro.monthly",
                productId: "pro.monthly",
                appleStatus: 0,
                attempts: 1,
                reason: "subscription changed by the app during verification (version 3 -> 4)"
            ),
            ReportItem(
                subscriptionId: 10,
                originalTransactionId: "1000010",
                outcome: "lapsed",
                userId: "u10",
                previousState: "grace_period",
                newState: "billing_retry",
                previousExpiresAt: date(-3),
                newExpiresAt: date(-3),
                previousProductId: "team.monthly",
                productId: "team.monthly",
                subscriptionGroupId: "g2",
                autoRenew: true,
                previousAutoRenew: true,
                environment: "Production",
                appleStatus: 0,
                attempts: 1
            ),
            ReportItem(
                subscriptionId: 11,
                originalTransactionId: "1000011",
                status: .pending,
                outcome: nil,
                userId: "u11",
                previousState: "active",
                previousExpiresAt: date(0),
                previousProductId: "pro.monthly"
            ),
        ]
    }

    static func transactions() -> [ReportTransaction] {
        [
            // Renewal after a trial (a conversion), with a price.
            ReportTransaction(
                transactionId: "2000001",
                originalTransactionId: "1000001",
                productId: "pro.monthly",
                subscriptionGroupId: "g1",
                kind: "renewal",
                purchaseDate: date(-1),
                expiresDate: date(29),
                previousWasTrial: true
            ),
            // Renewal after an intro offer, recovered subscription.
            ReportTransaction(
                transactionId: "2000004",
                originalTransactionId: "1000004",
                productId: "pro.monthly",
                subscriptionGroupId: "g1",
                kind: "renewal",
                purchaseDate: date(-0.5),
                expiresDate: date(25),
                previousWasIntroOffer: true
            ),
            // Upgrade to the yearly plan (no price in the catalog for EUR, one in USD).
            ReportTransaction(
                transactionId: "2000006",
                originalTransactionId: "1000006",
                productId: "pro.yearly",
                subscriptionGroupId: "g1",
                kind: "upgrade",
                purchaseDate: date(-0.2),
                expiresDate: date(365),
                offer: "=cmd|' /C calc'!A0"
            ),
            // A refund first seen now of an earlier renewal.
            ReportTransaction(
                transactionId: "2000005",
                originalTransactionId: "1000005",
                productId: "pro.monthly",
                subscriptionGroupId: "g1",
                kind: "renewal",
                purchaseDate: date(-10),
                expiresDate: date(20),
                cancellationDate: date(-0.1),
                cancellationReason: 0,
                firstSeenInRun: false,
                refundSeenInRun: true
            ),
            // A new trial on a product without a price.
            ReportTransaction(
                transactionId: "2000010",
                originalTransactionId: "1000012",
                productId: "team.monthly",
                subscriptionGroupId: "g2",
                kind: "initial",
                purchaseDate: date(-0.3),
                expiresDate: date(6.7),
                isTrial: true
            ),
            // A paid renewal on the product without a price.
            ReportTransaction(
                transactionId: "2000011",
                originalTransactionId: "1000013",
                productId: "team.monthly",
                subscriptionGroupId: "g2",
                kind: "renewal",
                purchaseDate: date(-0.4),
                expiresDate: date(30)
            ),
        ]
    }

    static func prices() -> [ProductPrice] {
        [
            ProductPrice(productId: "pro.monthly", currency: "USD", price: Decimal(string: "9.99") ?? 0, period: "P1M"),
            ProductPrice(productId: "pro.yearly", currency: "USD", price: Decimal(string: "79.99") ?? 0, period: "P1Y"),
        ]
    }
}
