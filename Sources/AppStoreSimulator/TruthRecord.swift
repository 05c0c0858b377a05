/// What Apple implies for one original_transaction_id at an instant, computed from the timeline model
/// (never from rendered JSON): one line of `truth.jsonl`.
public struct TruthRecord: Sendable, Equatable {
    public var originalTransactionID: UInt64
    public var scenario: Scenario
    public var environment: String
    public var bundleID: String
    public var appleStatus: Int
    public var state: String?
    public var expiresAt: Int64?
    public var productID: String?
    public var autoRenew: Bool?
    public var autoRenewProductID: String?
    public var gracePeriodExpiresAt: Int64?
    public var transactionCount: Int?
    public var revokedAt: Int64?

    /// Applies the project's rules (apple-receipts.md §1 "Deciding a subscription's state") to the model.
    public init(family: ReceiptFamily, plan: SubscriptionPlan, at now: Int64) {
        originalTransactionID = plan.originalTransactionID
        scenario = family.scenario
        environment = family.sandbox ? "Sandbox" : "Production"
        bundleID = family.bundleID
        if family.malformedStoredReceipt {
            appleStatus = 21002
        } else {
            appleStatus = family.fixedStatus ?? 0
        }
        guard appleStatus == 0 else { return }
        let tl = plan.timeline(at: now)
        let txns = tl.transactions
        transactionCount = txns.count
        autoRenew = tl.autoRenewStatus
        autoRenewProductID = tl.autoRenewProductID
        gracePeriodExpiresAt = tl.gracePeriodExpires
        let kept = txns.filter { !$0.isRefunded }
        let best = kept.max { $0.expires < $1.expires }
        let latestNonUpgrade = txns.filter { !$0.isUpgraded }.max { $0.expires < $1.expires }
        if let candidate = latestNonUpgrade, candidate.isRefunded, (best?.expires ?? Int64.min) <= candidate.expires {
            state = "revoked"
            revokedAt = candidate.cancellation
            if let best {
                expiresAt = best.expires
                productID = best.product.productID
            } else {
                let lastRefund = txns.filter(\.isRefunded).max { ($0.cancellation ?? 0) < ($1.cancellation ?? 0) }
                expiresAt = lastRefund?.cancellation
                productID = lastRefund?.product.productID
            }
            return
        }
        guard let best else { return }
        expiresAt = best.expires
        productID = best.product.productID
        if best.expires > now {
            state = "active"
        } else if let grace = tl.gracePeriodExpires, now < grace {
            state = "grace_period"
        } else if tl.inBillingRetry {
            state = "billing_retry"
        } else {
            state = "expired"
        }
    }

    /// One JSON line (keys in the documented order, nulls where not applicable).
    public func jsonLine() -> [UInt8] {
        var w = JSONWriter(capacity: 512)
        w.beginObject()
        w.field("original_transaction_id", String(originalTransactionID))
        w.field("scenario", scenario.rawValue)
        w.field("environment", environment)
        w.field("bundle_id", bundleID)
        w.key("apple_status")
        w.int(Int64(appleStatus))
        w.optionalField("state", state)
        w.optionalField("expires_at", expiresAt.map(SimTime.rfc3339))
        w.optionalField("product_id", productID)
        w.key("auto_renew")
        if let autoRenew { w.bool(autoRenew) } else { w.null() }
        w.optionalField("auto_renew_product_id", autoRenewProductID)
        w.optionalField("grace_period_expires_at", gracePeriodExpiresAt.map(SimTime.rfc3339))
        w.key("transaction_count")
        if let transactionCount { w.int(Int64(transactionCount)) } else { w.null() }
        w.optionalField("revoked_at", revokedAt.map(SimTime.rfc3339))
        w.endObject()
        w.bytes.append(10)
        return w.bytes
    }
}
