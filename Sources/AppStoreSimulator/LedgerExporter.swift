/// The money side of the truth (docs/simulator.md, "The Server API": `ledger.jsonl`, `revenue.json`), written next to
/// the Server API files (truth.jsonl keeps one line per subscription, its decision): `server-api/ledger.jsonl`, one
/// line per subscription the Server
/// API answers for (each transaction with its price, currency, storefront, offer, revocation and refunded amount),
/// and `server-api/revenue.json`, per currency the gross, refunded (full and prorated) and net customer prices
/// (milliunits) of every production transaction purchased at or before `now`, and the same figures for the
/// period of the day of `now` (purchases, and revocations, after midnight UTC and at or before `now`).
struct LedgerExporter: Sendable {
    let population: Population

    /// The lost orders' subscriptions (`Population.lostOrders`), in `ledger.jsonl`'s format, when there are any.
    static let lostOrdersFile = "lost-orders.jsonl"

    /// True when the Server API knows the subscription's ids (our app, account not deleted).
    static func isServed(_ family: ReceiptFamily, bundleId: String) -> Bool {
        family.bundleId == bundleId && family.fixedStatus != 21010
    }

    /// The amount refunded: the price times the revocation percentage, rounded to the currency's minor unit,
    /// half away from zero (Apple does not document its rounding; this is the convention docs/simulator.md
    /// states for revenue.json). Integer arithmetic: prices and percentages are positive.
    static func refunded(price: Int64, _ percentage: Int64?, minorUnit: Int64) -> Int64 {
        guard let percentage else { return 0 }
        let scale = 100_000 * minorUnit
        return (price * percentage + scale / 2) / scale * minorUnit
    }

    func ledgerLine(family: ReceiptFamily, plan: SubscriptionPlan, now: Int64) -> [UInt8] {
        let storefront = Storefront.of(seed: population.seed, familyIndex: family.index)
        var w = JSONWriter(capacity: 2048)
        w.beginObject()
        w.field("original_transaction_id", String(plan.originalTransactionId))
        w.field("environment", family.sandbox ? "Sandbox" : "Production")
        w.field("storefront", storefront.code)
        w.field("currency", storefront.currency)
        let token = AppAccountToken.of(seed: population.seed, family: family)
        let orderIds = OrderIdCodec(seed: population.seed)
        w.key("transactions")
        w.beginArray()
        for t in plan.timeline(at: now).transactions {
            w.beginObject()
            w.field("transaction_id", String(t.transactionId))
            // The receipt's order id: Look Up Order ID answers it in production (the sandbox has none).
            w.optionalField("order_id", family.sandbox ? nil : orderIds.orderId(of: t.transactionId))
            w.field("product_id", t.product.productId)
            w.field("purchase_date", SimTime.rfc3339(t.purchase))
            w.field("expires_date", SimTime.rfc3339(t.expires))
            w.key("price")
            w.int(storefront.price(of: t, anchor: population.anchor))
            w.field("currency", storefront.currency)
            w.field("storefront", storefront.code)
            w.optionalField("offer", t.offer?.ledgerName)
            // A family member's copy: the money is the purchaser's transaction, never this one.
            w.field("ownership_type", t.familyShared ? "FAMILY_SHARED" : "PURCHASED")
            w.key("offer_type")
            if let offer = t.offer { w.int(Int64(offer.type)) } else { w.null() }
            w.optionalField("offer_identifier", t.offer?.identifier)
            w.optionalField("offer_period", t.offer?.period)
            w.optionalField("offer_discount_type", t.offer?.discountType)
            w.optionalField("billing_plan_type", plan.commitmentMonths == nil ? nil : "MONTHLY")
            w.optionalField("app_account_token", token)
            let revocation = ServerAPIRenderer.revocation(of: t, seed: population.seed)
            w.optionalField("revocation_date", revocation.map { SimTime.rfc3339($0.date) })
            w.optionalField("revocation_type", revocation?.type)
            w.key("revocation_percentage")
            if let revocation, revocation.type != "FAMILY_REVOKE" { w.int(revocation.percentage) } else { w.null() }
            w.key("refunded_amount")
            w.int(
                Self.refunded(
                    price: storefront.price(of: t, anchor: population.anchor),
                    revocation?.percentage,
                    minorUnit: storefront.minorUnit
                )
            )
            w.endObject()
        }
        w.endArray()
        w.endObject()
        w.bytes.append(10)
        return w.bytes
    }

    /// Writes both files into `directory` (which exists).
    func export(to directory: String, now: Int64) throws {
        let ledger = try BufferedFile(path: directory + "/ledger.jsonl")
        var totals: [String: (gross: Int64, refunded: Int64)] = [:]
        let periodStart = SimTime.startOfDay(now)
        var period: [String: PeriodFigures] = [:]
        for family in population.families where Self.isServed(family, bundleId: population.bundleId) {
            let storefront = Storefront.of(seed: population.seed, familyIndex: family.index)
            for plan in family.subscriptions {
                try ledger.write(ledgerLine(family: family, plan: plan, now: now))
                guard !family.sandbox else { continue }
                for t in plan.timeline(at: now).transactions where !t.familyShared {
                    let price = storefront.price(of: t, anchor: population.anchor)
                    totals[storefront.currency, default: (0, 0)].gross += price
                    let share = ServerAPIRenderer.revocation(of: t, seed: population.seed)?.percentage
                    totals[storefront.currency, default: (0, 0)].refunded +=
                        Self.refunded(price: price, share, minorUnit: storefront.minorUnit)
                    period[storefront.currency, default: PeriodFigures()].add(
                        price: price,
                        purchase: t.purchase,
                        revocation: ServerAPIRenderer.revocation(of: t, seed: population.seed),
                        refunded: Self.refunded(price: price, share, minorUnit: storefront.minorUnit),
                        after: periodStart,
                        through: now
                    )
                }
            }
        }
        try ledger.close()
        try exportLostOrders(to: directory, now: now)
        // One-time purchases: money like a subscription's transactions (never family-shared), and apart.
        let oneTimeExporter = OneTimeChargeExporter(population: population)
        let oneTime = try oneTimeExporter.export(to: directory, now: now)
        for (item, storefront) in oneTimeExporter.charges(now: now) {
            let price = item.price(in: storefront)
            let refunded = item.isRefunded(at: now) ? price : 0
            totals[storefront.currency, default: (0, 0)].gross += price
            totals[storefront.currency, default: (0, 0)].refunded += refunded
            period[storefront.currency, default: PeriodFigures()].add(
                price: price,
                purchase: item.purchase,
                revocation: item.isRefunded(at: now) ? item.refundedAt.map { ($0, "REFUND_FULL", 100_000) } : nil,
                refunded: refunded,
                after: periodStart,
                through: now
            )
        }
        try writeRevenue(to: directory, now: now, totals: totals, period: (periodStart, period), oneTime: oneTime)
    }

    /// Lost orders: Apple's, never the app's (not in revenue.json's totals, which are what the app can learn).
    private func exportLostOrders(to directory: String, now: Int64) throws {
        guard !population.lostOrders.isEmpty else { return }
        let lost = try BufferedFile(path: directory + "/" + Self.lostOrdersFile)
        for family in population.lostOrders {
            for plan in family.subscriptions { try lost.write(ledgerLine(family: family, plan: plan, now: now)) }
        }
        try lost.close()
    }

    /// revenue.json: each currency's gross, refunded and net to `now`, the report period's figures (from
    /// `period.start`) and the one-time purchases'.
    private func writeRevenue(
        to directory: String,
        now: Int64,
        totals: [String: (gross: Int64, refunded: Int64)],
        period periodFigures: (start: Int64, figures: [String: PeriodFigures]),
        oneTime: [String: OneTimeChargeExporter.Figures]
    ) throws {
        let periodStart = periodFigures.start
        let period = periodFigures.figures
        var w = JSONWriter(capacity: 1024)
        w.beginObject()
        w.field("period_end", SimTime.rfc3339(now))
        w.field("unit", "milliunits")
        w.key("currencies")
        w.beginObject()
        for currency in totals.keys.sorted() {
            let t = totals[currency] ?? (0, 0)
            w.key(currency)
            w.beginObject()
            w.key("gross")
            w.int(t.gross)
            w.key("refunded")
            w.int(t.refunded)
            w.key("net")
            w.int(t.gross - t.refunded)
            w.endObject()
        }
        w.endObject()
        w.key("period")
        w.beginObject()
        w.field("start", SimTime.rfc3339(periodStart))
        w.field("end", SimTime.rfc3339(now))
        w.key("currencies")
        w.beginObject()
        for currency in period.keys.sorted() {
            w.key(currency)
            (period[currency] ?? PeriodFigures()).write(into: &w)
        }
        w.endObject()
        w.endObject()
        OneTimeChargeExporter.write(oneTime, into: &w)
        w.endObject()
        w.bytes.append(10)
        let revenue = try BufferedFile(path: directory + "/revenue.json")
        try revenue.write(w.bytes)
        try revenue.close()
    }
}
