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
            || (plan.winBack.map { $0.at == t.purchase } ?? false)
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
        let price = storefront.price(of: t, anchor: population.anchor)
        w.key("price")
        w.int(price)
        w.field("currency", storefront.currency)
        Self.writeOffer(t.offer, into: &w)
        writeCommitment(t, plan: plan, price: price, into: &w)
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
        if let token = AppAccountToken.of(seed: population.seed, family: family) { w.field("appAccountToken", token) }
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
        let restart = [plan.resubscription?.at, plan.winBack?.at].compactMap { $0 }.filter { $0 <= signedDate }.max()
        w.int(restart ?? plan.start)
        let facts = Self.renewalFacts(population: population, tl, plan: plan, family: family, at: signedDate)
        if let latest {
            w.key("renewalDate")
            w.int(latest.expires)
        }
        if let price = facts.price, let currency = facts.currency {
            w.field("currency", currency)
            w.key("renewalPrice")
            w.int(price)
            Self.writeOffer(facts.offer, into: &w)
        }
        if let status = facts.priceIncreaseStatus {
            w.key("priceIncreaseStatus")
            w.int(Int64(status))
        }
        writeRenewalCommitment(tl, plan: plan, facts: facts, into: &w)
        w.field("appTransactionId", Self.appTransactionId(family))
        if let token = AppAccountToken.of(seed: population.seed, family: family) { w.field("appAccountToken", token) }
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
