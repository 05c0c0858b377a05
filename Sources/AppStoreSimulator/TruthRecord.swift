/// What Apple implies for one original_transaction_id at an instant, computed from the timeline model
/// (never from rendered JSON): one line of `truth.jsonl`.
public struct TruthRecord: Sendable, Equatable {
    /// How a reconciler's row is to be compared with this record.
    public enum Expectation: String, Sendable, Equatable {
        /// Apple's answer decides: the row holds `state`, `expires_at`, `product_id`, the renewal fields,
        /// and the ledger `transaction_count` transactions.
        case decision
        /// The answer must be refused: the row keeps `stored_product_id` and `stored_expires_at` and gets
        /// no state (Apple's error status, another app's receipt, or an out-of-bounds value).
        case rejected
        /// 21010, "treat as if never purchased": the row holds `state` (expired), `product_id` (stored),
        /// auto-renew off, no ledger, and an expiry by `expires_at_rule`.
        case entitlementEnded = "entitlement_ended"
        /// Not due: the nightly window does not select the row (verified last night, expiry months away)
        /// and verifyReceipt has no notifications, so the row holds what the previous run left (`prior_run`)
        /// and is not verified again; the decision fields say what Apple implies, for a row no previous run
        /// verified. The Server API view of the same record is a decision: notifications make the row due.
        case notDue = "not_due"
    }

    /// What a previous night's run left in the row (the demo seeds it after the import).
    public struct PriorRun: Sendable, Equatable {
        public var verifiedAt: Int64
        public var state: String?
        public var expiresAt: Int64?
        public var productId: String?
        public var revokedAt: Int64?
    }

    /// `expires_at_rule` of 21010 rows: the row's expiry is min(`expires_at`, the run's clock), which the
    /// truth cannot know (`expires_at` is the stored expiry: never later than it, never after the run).
    public static let notAfterRun = "not_after_run"

    public var originalTransactionId: UInt64
    public var scenario: Scenario
    public var environment: String
    public var bundleId: String
    public var appleStatus: Int
    public var expect: Expectation
    public var state: String?
    public var expiresAt: Int64?
    public var productId: String?
    public var autoRenew: Bool?
    public var autoRenewProductId: String?
    public var gracePeriodExpiresAt: Int64?
    public var transactionCount: Int?
    public var revokedAt: Int64?
    /// What the app stored (`purchases.jsonl`).
    public var storedProductId: String
    public var storedExpiresAt: Int64
    public var expiresAtRule: String?
    public var priorRun: PriorRun?
    /// What the App Store Server API implies where it differs from verifyReceipt: it has no receipt, so a
    /// receipt verifyReceipt refuses (21002, 21003, 21004) is decided from the timeline there, and a deleted
    /// account is unknown (4040010: refused, row untouched). Nil where both agree.
    public var serverAPI: ServerAPIView?

    /// The decision fields of `TruthRecord` as the App Store Server API implies them.
    public struct ServerAPIView: Sendable, Equatable {
        public var expect: Expectation
        public var state: String?
        public var expiresAt: Int64?
        public var productId: String?
        public var autoRenew: Bool?
        public var autoRenewProductId: String?
        public var gracePeriodExpiresAt: Int64?
        public var transactionCount: Int?
        public var revokedAt: Int64?
    }

    /// Applies the project's rules (docs/decision-rules.md, section 2) to the model, for verifyReceipt and,
    /// where it differs, for the App Store Server API.
    public init(family: ReceiptFamily, plan: SubscriptionPlan, at now: Int64) {
        self.init(family: family, plan: plan, at: now, asServerAPI: false)
        let other = TruthRecord(family: family, plan: plan, at: now, asServerAPI: true)
        let view = ServerAPIView(
            expect: other.expect,
            state: other.state,
            expiresAt: other.expiresAt,
            productId: other.productId,
            autoRenew: other.autoRenew,
            autoRenewProductId: other.autoRenewProductId,
            gracePeriodExpiresAt: other.gracePeriodExpiresAt,
            transactionCount: other.transactionCount,
            revokedAt: other.revokedAt
        )
        let mine = ServerAPIView(
            expect: expect,
            state: state,
            expiresAt: expiresAt,
            productId: productId,
            autoRenew: autoRenew,
            autoRenewProductId: autoRenewProductId,
            gracePeriodExpiresAt: gracePeriodExpiresAt,
            transactionCount: transactionCount,
            revokedAt: revokedAt
        )
        if view != mine { serverAPI = view }
    }

    private init(family: ReceiptFamily, plan: SubscriptionPlan, at now: Int64, asServerAPI: Bool) {
        originalTransactionId = plan.originalTransactionId
        scenario = family.scenario
        environment = family.sandbox ? "Sandbox" : "Production"
        bundleId = family.bundleId
        let stored = family.storedRow(plan)
        storedProductId = stored.productId
        storedExpiresAt = stored.expires
        appleStatus = family.malformedStoredReceipt ? 21002 : family.fixedStatus ?? 0
        expect = .decision
        if asServerAPI {
            // No receipt: only the account (21010: unknown there, 4040010) refuses.
            if appleStatus == 21010 {
                expect = .rejected
                return
            }
            if [21002, 21003, 21004].contains(appleStatus) { appleStatus = 0 }
        }
        if let at = family.priorRunAt, at < now {
            var prior = TruthRecord(family: family, plan: plan, at: at, asServerAPI: asServerAPI)
            prior.priorRun = nil
            priorRun = PriorRun(
                verifiedAt: at,
                state: prior.state,
                expiresAt: prior.expiresAt,
                productId: prior.productId,
                revokedAt: prior.revokedAt
            )
        }
        if !asServerAPI, scenario.seenOnlyThroughNotifications, priorRun != nil {
            // The decision fields below still say what Apple implies (for a row no previous run verified).
            expect = .notDue
        }
        if appleStatus == 21010 {
            // "Treat as if a purchase was never made": the entitlement ends at the run, the row stays.
            expect = .entitlementEnded
            state = "expired"
            expiresAt = stored.expires
            expiresAtRule = Self.notAfterRun
            productId = stored.productId
            autoRenew = false
            transactionCount = 0
            return
        }
        // The out-of-bounds values are put into verifyReceipt's JSON only; the Server API signs the timeline's.
        guard appleStatus == 0, family.bundleId == family.appBundleId, asServerAPI || family.implausibleValue == nil
        else {
            expect = .rejected
            return
        }
        decide(plan.timeline(at: now), now: now)
    }

    private mutating func decide(_ tl: SubscriptionTimeline, now: Int64) {
        let txns = tl.transactions
        transactionCount = txns.count
        autoRenew = tl.autoRenewStatus
        autoRenewProductId = tl.autoRenewProductId
        gracePeriodExpiresAt = tl.gracePeriodExpires
        // Refunded: never purchased. Upgraded (with or without a cancellation date): replaced.
        let remaining = txns.filter { !$0.isRefunded && !$0.isUpgraded }
        let best = remaining.max { $0.expires < $1.expires }
        let topRefund = txns.filter(\.isRefunded).max { $0.expires < $1.expires }
        // Revoked only when the refund held the entitlement and nothing remaining is valid now.
        if let topRefund, best.map({ topRefund.expires > $0.expires && $0.expires <= now }) ?? true {
            state = "revoked"
            revokedAt = topRefund.cancellation
            if let best {
                expiresAt = best.expires
                productId = best.product.productId
            } else {
                let lastRefund = txns.filter(\.isRefunded).max { ($0.cancellation ?? 0) < ($1.cancellation ?? 0) }
                expiresAt = lastRefund?.cancellation
                productId = lastRefund?.product.productId
            }
            return
        }
        guard let best else { return }
        expiresAt = best.expires
        productId = best.product.productId
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
    public func jsonLine() -> [UInt8] { jsonLine(appending: { _ in }) }

    /// One JSON line with more keys written by `appending` after the documented ones.
    func jsonLine(appending: (inout JSONWriter) -> Void) -> [UInt8] {
        var w = JSONWriter(capacity: 768)
        w.beginObject()
        w.field("original_transaction_id", String(originalTransactionId))
        w.field("scenario", scenario.rawValue)
        w.field("environment", environment)
        w.field("bundle_id", bundleId)
        w.key("apple_status")
        w.int(Int64(appleStatus))
        w.field("expect", expect.rawValue)
        w.optionalField("state", state)
        w.optionalField("expires_at", expiresAt.map(SimTime.rfc3339))
        w.optionalField("product_id", productId)
        w.key("auto_renew")
        if let autoRenew { w.bool(autoRenew) } else { w.null() }
        w.optionalField("auto_renew_product_id", autoRenewProductId)
        w.optionalField("grace_period_expires_at", gracePeriodExpiresAt.map(SimTime.rfc3339))
        w.key("transaction_count")
        if let transactionCount { w.int(Int64(transactionCount)) } else { w.null() }
        w.optionalField("revoked_at", revokedAt.map(SimTime.rfc3339))
        w.field("stored_product_id", storedProductId)
        w.field("stored_expires_at", SimTime.rfc3339(storedExpiresAt))
        w.optionalField("expires_at_rule", expiresAtRule)
        w.key("server_api")
        if let view = serverAPI {
            w.beginObject()
            w.field("expect", view.expect.rawValue)
            w.optionalField("state", view.state)
            w.optionalField("expires_at", view.expiresAt.map(SimTime.rfc3339))
            w.optionalField("product_id", view.productId)
            w.key("auto_renew")
            if let autoRenew = view.autoRenew { w.bool(autoRenew) } else { w.null() }
            w.optionalField("auto_renew_product_id", view.autoRenewProductId)
            w.optionalField("grace_period_expires_at", view.gracePeriodExpiresAt.map(SimTime.rfc3339))
            w.key("transaction_count")
            if let count = view.transactionCount { w.int(Int64(count)) } else { w.null() }
            w.optionalField("revoked_at", view.revokedAt.map(SimTime.rfc3339))
            w.endObject()
        } else {
            w.null()
        }
        w.key("prior_run")
        if let priorRun {
            w.beginObject()
            w.field("verified_at", SimTime.rfc3339(priorRun.verifiedAt))
            w.optionalField("state", priorRun.state)
            w.optionalField("expires_at", priorRun.expiresAt.map(SimTime.rfc3339))
            w.optionalField("product_id", priorRun.productId)
            w.optionalField("revoked_at", priorRun.revokedAt.map(SimTime.rfc3339))
            w.endObject()
        } else {
            w.null()
        }
        appending(&w)
        w.endObject()
        w.bytes.append(10)
        return w.bytes
    }
}
