/// `server-api/sales-truth.jsonl` (docs/simulator.md, "Sales truth"): what the simulator knows of every difference
/// between the money Apple reports and the money the app's ledger can hold, one line per event in a window, so that a
/// tie-out can be checked against the causes the world put there rather than against its own rules.
///
/// Lines: each event of Apple's reports (`SalesTruth`: purchases and refunds, with the facts that make Apple's figures
/// differ from a ledger's: the storefront's tax, the commission tier, the settlement day, whether the customer is a
/// lost order), then each family member's copy (`FAMILY_SHARED`) purchased in the window, which the app's ledger
/// holds at a price and Apple never reports.
public struct SalesTruthExporter: Sendable {
    public static let fileName = "sales-truth.jsonl"

    public let population: Population

    public init(population: Population) {
        self.population = population
    }

    /// Writes the events at or after `from` and before `until` (UTC ms), the world as it stands at `asOf`, to `path`.
    public func export(to path: String, from: Int64, until: Int64, asOf: Int64) throws {
        let file = try BufferedFile(path: path)
        for event in SalesTruth(population: population).events(from: from, until: until, asOf: asOf) {
            try file.write(line(event))
        }
        for family in population.families
        where !family.sandbox && LedgerExporter.isServed(family, bundleId: population.bundleId) {
            let storefront = Storefront.of(seed: population.seed, familyIndex: family.index)
            for plan in family.subscriptions {
                for t in plan.timeline(at: asOf).transactions where t.familyShared && t.purchase >= from {
                    guard t.purchase < until else { continue }
                    try file.write(familyShared(t, storefront: storefront))
                }
            }
        }
        try file.close()
    }

    private func line(_ event: SalesEvent) -> [UInt8] {
        var w = JSONWriter(capacity: 512)
        w.beginObject()
        w.field("kind", event.kind == .refund ? "refund" : "purchase")
        common(&w, event.transaction, at: event.at, storefront: event.storefront)
        w.key("customer_price")
        w.int(event.customerPrice)
        w.key("proceeds")
        w.int(event.proceeds)
        w.key("tax_percent")
        w.int(event.storefront.taxPercent)
        w.key("after_one_year")
        w.bool(event.afterOneYear)
        w.field("settlement_day", event.settlementDay(seed: population.seed).iso)
        if event.kind == .refund { w.field("purchase_day", ReportDay.containing(event.transaction.purchase).iso) }
        w.key("lost_order")
        w.bool(event.lostOrder)
        w.endObject()
        w.bytes.append(10)
        return w.bytes
    }

    private func familyShared(_ t: SimTransaction, storefront: Storefront) -> [UInt8] {
        var w = JSONWriter(capacity: 384)
        w.beginObject()
        w.field("kind", "family_shared")
        common(&w, t, at: t.purchase, storefront: storefront)
        w.key("customer_price")
        w.int(storefront.price(of: t, anchor: population.anchor))
        w.endObject()
        w.bytes.append(10)
        return w.bytes
    }

    /// The fields every line has: when (UTC and Pacific day), which transaction and product, where.
    private func common(_ w: inout JSONWriter, _ t: SimTransaction, at: Int64, storefront: Storefront) {
        w.field("at", SimTime.rfc3339(at))
        w.field("pacific_day", ReportDay.containing(at).iso)
        w.field("transaction_id", String(t.transactionId))
        w.field("original_transaction_id", String(t.originalTransactionId))
        w.field("product_id", t.product.productId)
        w.field("subscription_apple_id", population.catalog.appleId(of: t.product))
        w.field("storefront", storefront.code)
        w.field("country", storefront.country)
        w.field("currency", storefront.currency)
    }
}
