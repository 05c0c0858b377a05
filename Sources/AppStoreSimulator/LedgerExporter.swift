/// The money side of the truth (docs/simulator.md, "Ledger and revenue"), written next to the Server API files
/// so that `truth.jsonl` stays byte-identical: `server-api/ledger.jsonl`, one line per subscription the Server
/// API answers for (each transaction with its price, currency, storefront, offer and revocation), and
/// `server-api/revenue.json`, per currency the gross, refunded and net customer prices (milliunits) of every
/// production transaction purchased at or before `now`.
struct LedgerExporter: Sendable {
    let population: Population

    /// True when the Server API knows the subscription's ids (our app, account not deleted).
    static func isServed(_ family: ReceiptFamily, bundleID: String) -> Bool {
        family.bundleID == bundleID && family.fixedStatus != 21010
    }

    func ledgerLine(family: ReceiptFamily, plan: SubscriptionPlan, now: Int64) -> [UInt8] {
        let storefront = Storefront.of(seed: population.seed, familyIndex: family.index)
        var w = JSONWriter(capacity: 2048)
        w.beginObject()
        w.field("original_transaction_id", String(plan.originalTransactionID))
        w.field("environment", family.sandbox ? "Sandbox" : "Production")
        w.field("storefront", storefront.code)
        w.field("currency", storefront.currency)
        w.key("transactions")
        w.beginArray()
        for t in plan.timeline(at: now).transactions {
            w.beginObject()
            w.field("transaction_id", String(t.transactionID))
            w.field("product_id", t.product.productID)
            w.field("purchase_date", SimTime.rfc3339(t.purchase))
            w.field("expires_date", SimTime.rfc3339(t.expires))
            w.key("price")
            w.int(storefront.price(of: t, anchor: population.anchor))
            w.field("currency", storefront.currency)
            w.field("storefront", storefront.code)
            w.optionalField("offer", t.isTrial ? "free_trial" : t.isIntro ? "pay_as_you_go" : nil)
            w.optionalField("revocation_date", t.isRefunded ? t.cancellation.map(SimTime.rfc3339) : nil)
            w.optionalField("revocation_type", t.isRefunded ? "REFUND_FULL" : nil)
            w.key("revocation_percentage")
            if t.isRefunded { w.int(100_000) } else { w.null() }
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
        for family in population.families where Self.isServed(family, bundleID: population.bundleID) {
            let storefront = Storefront.of(seed: population.seed, familyIndex: family.index)
            for plan in family.subscriptions {
                try ledger.write(ledgerLine(family: family, plan: plan, now: now))
                guard !family.sandbox else { continue }
                for t in plan.timeline(at: now).transactions {
                    let price = storefront.price(of: t, anchor: population.anchor)
                    totals[storefront.currency, default: (0, 0)].gross += price
                    if t.isRefunded { totals[storefront.currency, default: (0, 0)].refunded += price }
                }
            }
        }
        try ledger.close()
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
        w.endObject()
        w.bytes.append(10)
        let revenue = try BufferedFile(path: directory + "/revenue.json")
        try revenue.write(w.bytes)
        try revenue.close()
    }
}
