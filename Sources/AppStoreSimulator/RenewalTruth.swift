/// The renewal-info facts of one subscription as the App Store Server API signs them at `now`, appended to its
/// `truth.jsonl` line (docs/simulator.md, "truth.jsonl, 2026 keys"); all null for a subscription the Server API
/// does not know (another app's receipt, a deleted account).
struct RenewalTruth: Sendable {
    var appAccountToken: String?
    var appTransactionId: String?
    var expirationIntent: Int?
    var priceIncreaseStatus: Int?
    var renewalPrice: Int64?
    var renewalCurrency: String?
    var renewalBillingPlanType: String?

    init(renderer: ServerAPIRenderer, family: ReceiptFamily, plan: SubscriptionPlan, now: Int64) {
        guard LedgerExporter.isServed(family, bundleId: renderer.population.bundleId) else { return }
        let tl = plan.timeline(at: now)
        let facts = ServerAPIRenderer.renewalFacts(
            population: renderer.population,
            tl,
            plan: plan,
            family: family,
            at: now
        )
        appAccountToken = AppAccountToken.of(seed: renderer.population.seed, family: family)
        appTransactionId = ServerAPIRenderer.appTransactionId(family)
        expirationIntent = tl.expirationIntent
        priceIncreaseStatus = facts.priceIncreaseStatus
        renewalPrice = facts.price
        renewalCurrency = facts.currency
        renewalBillingPlanType = facts.billingPlanType
    }

    func write(into w: inout JSONWriter) {
        w.optionalField("app_account_token", appAccountToken)
        w.optionalField("app_transaction_id", appTransactionId)
        for (key, value) in [
            ("expiration_intent", expirationIntent.map(Int64.init)),
            ("price_increase_status", priceIncreaseStatus.map(Int64.init)), ("renewal_price", renewalPrice),
        ] {
            w.key(key)
            if let value { w.int(value) } else { w.null() }
        }
        w.optionalField("renewal_currency", renewalCurrency)
        w.optionalField("renewal_billing_plan_type", renewalBillingPlanType)
    }
}
