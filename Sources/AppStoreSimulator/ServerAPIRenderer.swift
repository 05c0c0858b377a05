/// Renders the App Store Server API's payloads from the same timelines verifyReceipt answers from
/// (docs/simulator.md, "The Server API"): `JWSTransactionDecodedPayload`, `JWSRenewalInfoDecodedPayload`,
/// and the response bodies around them. Dates are UNIX milliseconds, prices milliunits.
public struct ServerAPIRenderer: Sendable {
    public let population: Population
    public let identity: ServerAPIIdentity

    public init(population: Population, identity: ServerAPIIdentity) {
        self.population = population
        self.identity = identity
    }

    /// Where a transaction id lives: its family, its subscription and its index in the timeline.
    public struct Location: Sendable {
        public var family: ReceiptFamily
        public var plan: SubscriptionPlan
        public var index: Int
    }

    /// Apple's `status` of a subscription's latest transaction: 1 active, 2 expired, 3 billing retry,
    /// 4 billing grace period, 5 revoked.
    public static func status(_ tl: SubscriptionTimeline, now: Int64) -> Int {
        guard let latest = tl.transactions.max(by: { $0.purchase < $1.purchase }) else { return 2 }
        if latest.isRefunded { return 5 }
        if latest.expires > now { return 1 }
        if let grace = tl.gracePeriodExpires, now < grace { return 4 }
        if tl.inBillingRetry { return 3 }
        return 2
    }

    static func environment(_ family: ReceiptFamily) -> String { family.sandbox ? "Sandbox" : "Production" }

    /// The app transaction id of the family (one per customer and app).
    static func appTransactionId(_ family: ReceiptFamily) -> String {
        String(704_000_000_000_000_000 + UInt64(family.index))
    }

    /// True when `t` starts a purchase (the first transaction, or a resubscription), not a renewal.
    static func isPurchase(_ t: SimTransaction, in plan: SubscriptionPlan) -> Bool {
        t.index == 0 || (plan.resubscription.map { $0.at == t.purchase } ?? false)
            || (plan.upgrade.map { $0.at == t.purchase } ?? false)
    }

    /// How a refunded transaction was revoked: a third of the refunds made before the period ended are prorated
    /// (`REFUND_PRORATED`, the unused share of the period in milliunits: 45000 is 45%); the others are full
    /// (`REFUND_FULL`, 100000). Either way the transaction is revoked from `date` on.
    public static func revocation(
        of t: SimTransaction,
        seed: UInt64
    )
        -> (date: Int64, type: String, percentage: Int64)?
    {
        guard t.isRefunded, let at = t.cancellation else { return nil }
        // A family member's copy ends when the purchaser's does or sharing stops: Apple's FAMILY_REVOKE, no refund
        // and no percentage (docs/simulator.md, "Money").
        if t.familyShared { return (at, "FAMILY_REVOKE", 0) }
        if at > t.purchase, at < t.expires, SeededRandom.hash(seed, 0x9E0F, t.transactionId) % 3 == 0 {
            let share = (t.expires - at) * 100_000 / (t.expires - t.purchase)
            return (at, "REFUND_PRORATED", max(1, share))
        }
        return (at, "REFUND_FULL", 100_000)
    }

    /// The transaction payload (JSON bytes, before signing).
    public func transactionPayload(
        _ t: SimTransaction,
        plan: SubscriptionPlan,
        family: ReceiptFamily,
        signedDate: Int64
    ) -> [UInt8] {
        let storefront = Storefront.of(seed: population.seed, familyIndex: family.index)
        var w = JSONWriter(capacity: 1024)
        w.beginObject()
        w.field("transactionId", String(t.transactionId))
        w.field("originalTransactionId", String(t.originalTransactionId))
        w.field("webOrderLineItemId", String(t.webOrderLineItemId))
        w.field("bundleId", family.bundleId)
        w.field("productId", t.product.productId)
        w.field("subscriptionGroupIdentifier", t.product.groupId)
        w.key("purchaseDate")
        w.int(t.purchase)
        w.key("originalPurchaseDate")
        w.int(t.originalPurchase)
        w.key("expiresDate")
        w.int(t.expires)
        w.key("quantity")
        w.int(1)
        w.field("type", "Auto-Renewable Subscription")
        w.field("inAppOwnershipType", t.familyShared ? "FAMILY_SHARED" : "PURCHASED")
        w.key("signedDate")
        w.int(signedDate)
        w.field("environment", Self.environment(family))
        w.field("transactionReason", Self.isPurchase(t, in: plan) ? "PURCHASE" : "RENEWAL")
        w.field("storefront", storefront.code)
        w.field("storefrontId", storefront.id)
        w.key("price")
        w.int(storefront.price(of: t, anchor: population.anchor))
        w.field("currency", storefront.currency)
        if t.isTrial {
            w.key("offerType")
            w.int(1)
            w.field("offerDiscountType", "FREE_TRIAL")
        } else if t.isIntro {
            w.key("offerType")
            w.int(t.offerCodeRefName == nil ? 1 : 3)
            if let code = t.offerCodeRefName { w.field("offerIdentifier", code) }
            w.field("offerDiscountType", "PAY_AS_YOU_GO")
        }
        if t.isUpgraded {
            w.key("isUpgraded")
            w.bool(true)
        }
        if let revocation = Self.revocation(of: t, seed: population.seed) {
            w.key("revocationDate")
            w.int(revocation.date)
            w.key("revocationReason")
            w.int(Int64(t.cancellationReason ?? 0))
            w.field("revocationType", revocation.type)
            if revocation.type != "FAMILY_REVOKE" {
                w.key("revocationPercentage")
                w.int(revocation.percentage)
            }
        }
        w.field("appTransactionId", Self.appTransactionId(family))
        w.endObject()
        return w.bytes
    }

    /// The renewal info payload of a subscription evaluated at `now`.
    public func renewalPayload(
        _ tl: SubscriptionTimeline,
        plan: SubscriptionPlan,
        family: ReceiptFamily,
        signedDate: Int64
    ) -> [UInt8] {
        let storefront = Storefront.of(seed: population.seed, familyIndex: family.index)
        let latest = tl.transactions.max { $0.purchase < $1.purchase }
        var w = JSONWriter(capacity: 512)
        w.beginObject()
        w.field("originalTransactionId", String(plan.originalTransactionId))
        w.field("autoRenewProductId", tl.autoRenewProductId)
        w.field("productId", tl.productId)
        w.key("autoRenewStatus")
        w.int(tl.autoRenewStatus ? 1 : 0)
        if let intent = tl.expirationIntent {
            w.key("expirationIntent")
            w.int(Int64(intent))
        }
        if tl.expirationIntent != nil || tl.inBillingRetry {
            w.key("isInBillingRetryPeriod")
            w.bool(tl.inBillingRetry)
        }
        if let grace = tl.gracePeriodExpires {
            w.key("gracePeriodExpiresDate")
            w.int(grace)
        }
        w.key("signedDate")
        w.int(signedDate)
        w.field("environment", Self.environment(family))
        w.key("recentSubscriptionStartDate")
        w.int(plan.resubscription.map { $0.at <= signedDate ? $0.at : plan.start } ?? plan.start)
        if let latest {
            w.key("renewalDate")
            w.int(latest.expires)
            if tl.autoRenewStatus {
                let next =
                    plan.product.productId == tl.autoRenewProductId
                    ? latest.product
                    : ([
                        population.catalog.proMonthly, population.catalog.proYearly, population.catalog.proPlusMonthly,
                        population.catalog.newsWeekly, population.catalog.newsMonthly, population.catalog.newsYearly,
                    ]
                    .first { $0.productId == tl.autoRenewProductId } ?? latest.product)
                w.field("currency", storefront.currency)
                w.key("renewalPrice")
                w.int(storefront.listPrice(next, purchase: latest.expires, anchor: population.anchor))
            }
        }
        w.field("appTransactionId", Self.appTransactionId(family))
        w.endObject()
        return w.bytes
    }

    /// `{"errorCode": N, "errorMessage": "..."}`.
    public static func errorBody(_ code: Int) -> [UInt8] {
        var w = JSONWriter(capacity: 96)
        w.beginObject()
        w.key("errorCode")
        w.int(Int64(code))
        w.field("errorMessage", errorMessage(code))
        w.endObject()
        return w.bytes
    }

    static func errorMessage(_ code: Int) -> String {
        switch code {
        case 4_000_005: "Invalid request revision."
        case 4_000_006: "Invalid transaction id."
        case 4_000_012: "Invalid request. The start date is earlier than the allowed start date."
        case 4_000_013: "Invalid request. The start date is later than the end date."
        case 4_000_014: "Invalid pagination token."
        case 4_000_015: "Invalid start date."
        case 4_000_016: "Invalid end date."
        case 4_000_018: "Invalid notification type."
        case 4_000_019: "Invalid request. Provide a notification type or a transaction id, not both."
        case 4_000_031: "Invalid status."
        case 4_040_002: "Account not found. Please try again."
        case 4_040_004: "App not found. Please try again."
        case 4_040_006: "Original transaction id not found. Please try again."
        case 4_040_010: "Transaction id not found."
        case 4_290_000: "Rate limit exceeded."
        case 5_000_001: "An unknown error occurred. Please try again."
        default: "An unknown error occurred."
        }
    }
}
