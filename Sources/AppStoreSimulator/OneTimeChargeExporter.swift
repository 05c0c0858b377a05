/// `server-api/one-time-charges.jsonl` (docs/simulator.md, "Export files"): every one-time purchase the Server
/// API knows at `now`, one line each, and its money per currency for `revenue.json` (counted in `gross` and
/// `refunded` like a subscription's transactions, and apart under `one_time`).
struct OneTimeChargeExporter: Sendable {
    struct Figures: Sendable {
        var purchases: Int64 = 0
        var gross: Int64 = 0
        var refunds: Int64 = 0
        var refunded: Int64 = 0
    }

    let population: Population

    /// The purchases made at or before `now`, with their storefront.
    func charges(now: Int64) -> [(OneTimePurchase, Storefront)] {
        population.oneTimePurchases.filter { $0.purchase <= now }.map {
            ($0, Storefront.of(seed: population.seed, familyIndex: $0.familyIndex))
        }
    }

    /// Writes the file and returns the figures per currency.
    func export(to directory: String, now: Int64) throws -> [String: Figures] {
        let file = try BufferedFile(path: directory + "/one-time-charges.jsonl")
        var figures: [String: Figures] = [:]
        for (item, storefront) in charges(now: now) {
            let price = item.price(in: storefront)
            let refunded = item.isRefunded(at: now)
            var w = JSONWriter(capacity: 384)
            w.beginObject()
            w.field("transaction_id", String(item.transactionId))
            w.field("product_id", item.productId)
            w.field("type", item.kind.rawValue)
            w.field("purchase_date", SimTime.rfc3339(item.purchase))
            w.key("price")
            w.int(price)
            w.field("currency", storefront.currency)
            w.field("storefront", storefront.code)
            w.key("refunded")
            w.bool(refunded)
            w.optionalField("revocation_date", refunded ? item.refundedAt.map(SimTime.rfc3339) : nil)
            w.endObject()
            w.bytes.append(10)
            try file.write(w.bytes)
            figures[storefront.currency, default: Figures()].purchases += 1
            figures[storefront.currency, default: Figures()].gross += price
            if refunded {
                figures[storefront.currency, default: Figures()].refunds += 1
                figures[storefront.currency, default: Figures()].refunded += price
            }
        }
        try file.close()
        return figures
    }

    /// `one_time`: per currency `purchases`, `gross`, `refunds`, `refunded`, `net`.
    static func write(_ figures: [String: Figures], into w: inout JSONWriter) {
        w.key("one_time")
        w.beginObject()
        for currency in figures.keys.sorted() {
            let f = figures[currency] ?? Figures()
            w.key(currency)
            w.beginObject()
            for (key, value) in [
                ("purchases", f.purchases), ("gross", f.gross), ("refunds", f.refunds), ("refunded", f.refunded),
                ("net", f.gross - f.refunded),
            ] {
                w.key(key)
                w.int(value)
            }
            w.endObject()
        }
        w.endObject()
    }
}
