/// `server-api/notifications-truth.json` (docs/simulator.md, "Export files"): what Get Notification History
/// serves in production for the window of 180 days up to `now` (counts per type and per type/subtype), the refund
/// requests Apple asked about (CONSUMPTION_REQUEST) and their outcome at `now`, and the mass extensions.
struct NotificationsTruthExporter: Sendable {
    static let fileName = "notifications-truth.json"
    let population: Population

    /// Every production notification served for a request with `startDate` `start` and an `endDate` after `now`.
    func events(from start: Int64, now: Int64) -> [NotificationHistory.Event] {
        var all: [NotificationHistory.Event] = []
        for family in population.families
        where !family.sandbox && family.bundleId == population.bundleId && family.fixedStatus != 21010 {
            for p in family.subscriptions.indices {
                all += NotificationHistory.events(family: family, planIndex: p, now: now)
            }
        }
        all += NotificationHistory.populationEvents(population, family: nil, sandbox: false, now: now)
        return all.filter { $0.date >= start && $0.date <= now }
    }

    func export(to directory: String, now: Int64) throws {
        let start = now - NotificationHistory.retention(sandbox: false)
        var counts: [String: Int64] = [:]
        let served = events(from: start, now: now)
        for e in served {
            counts[e.type, default: 0] += 1
            if let sub = e.subtype { counts[e.type + "/" + sub, default: 0] += 1 }
        }
        var w = JSONWriter(capacity: 8192)
        w.beginObject()
        w.field("environment", "Production")
        w.field("start", SimTime.rfc3339(start))
        w.field("end", SimTime.rfc3339(now))
        w.key("total")
        w.int(Int64(served.count))
        w.key("counts")
        w.beginObject()
        for key in counts.keys.sorted() {
            w.key(key)
            w.int(counts[key] ?? 0)
        }
        w.endObject()
        writeRefundRequests(now: now, into: &w)
        writeMassExtensions(now: now, into: &w)
        w.endObject()
        w.bytes.append(10)
        let file = try BufferedFile(path: directory + "/" + Self.fileName)
        try file.write(w.bytes)
        try file.close()
    }

    /// `refund_requests`: every CONSUMPTION_REQUEST sent by `now`, by date: `transaction_id`, `kind`
    /// (`subscription` or `one_time`), `requested_at` (the notification's `signedDate`), `outcome`.
    private func writeRefundRequests(now: Int64, into w: inout JSONWriter) {
        var rows: [(Int64, UInt64, String, String)] = []
        for family in population.families
        where !family.sandbox && family.bundleId == population.bundleId && family.fixedStatus != 21010 {
            for plan in family.subscriptions {
                for r in plan.refundRequests where r.requestedAt <= now {
                    let id = plan.originalTransactionId + UInt64(r.transactionIndex)
                    rows.append((r.requestedAt, id, "subscription", plan.outcome(of: r, at: now)))
                }
            }
        }
        for item in population.oneTimePurchases {
            guard let at = item.refundRequestedAt, at <= now else { continue }
            rows.append((at, item.transactionId, "one_time", item.isRefunded(at: now) ? "refunded" : "open"))
        }
        rows.sort { ($0.0, $0.1) < ($1.0, $1.1) }
        w.key("refund_requests")
        w.beginArray()
        for (at, id, kind, outcome) in rows {
            w.beginObject()
            w.field("transaction_id", String(id))
            w.field("kind", kind)
            w.field("requested_at", SimTime.rfc3339(at))
            w.field("outcome", outcome)
            w.endObject()
        }
        w.endArray()
    }

    /// `mass_extensions`: those completed by `now`.
    private func writeMassExtensions(now: Int64, into w: inout JSONWriter) {
        w.key("mass_extensions")
        w.beginArray()
        for mass in population.massExtensions where mass.completedAt <= now {
            w.beginObject()
            w.field("request_identifier", mass.requestIdentifier)
            w.field("product_id", mass.productId)
            w.key("storefront_country_codes")
            w.beginArray()
            for code in mass.storefrontCountryCodes { w.string(code) }
            w.endArray()
            w.field("completed_at", SimTime.rfc3339(mass.completedAt))
            w.key("days")
            w.int(mass.days)
            w.key("succeeded_count")
            w.int(Int64(mass.succeeded.count))
            w.key("failed_count")
            w.int(Int64(mass.failed.count))
            w.key("extended_original_transaction_ids")
            w.beginArray()
            for sub in mass.succeeded {
                w.string(String(population.families[sub.family].subscriptions[sub.plan].originalTransactionId))
            }
            w.endArray()
            w.endObject()
        }
        w.endArray()
    }
}
