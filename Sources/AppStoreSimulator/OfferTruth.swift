/// One subscription's offer mix in the period of a first reconciliation run at `now`, counted from its timeline by
/// the definitions of docs/reports.md ("Churn, offers and price increases") and appended to its `truth.jsonl` line
/// as `period_offers` (docs/simulator.md, "truth.jsonl, 2026 keys"); null for a subscription the Server API does
/// not know (another app's receipt, a deleted account), whose transactions no ledger holds.
///
/// The period is the calendar day (UTC) of `now`: purchases after midnight UTC and at or before `now`, like
/// revenue.json's `period` (docs/reports.md, "The period"). Per offer type (Apple's `offerType`):
/// - **started**: a transaction purchased in the period with an offer whose previous transaction (the one
///   purchased before it in the same subscription, whatever it was, refunded included) had none of that type;
/// - **converted**: a renewal purchased in the period without an offer whose previous transaction had an offer of
///   that type. A renewal is what the ledger calls one: not the subscription's first transaction, not the first
///   one of the plan an upgrade moved to, and not refunded or revoked by `now`.
///
/// A family member's copy (`FAMILY_SHARED`) is never counted: the purchaser's transaction is.
struct OfferTruth: Sendable, Equatable {
    /// Offers of one type: started and converted in the period.
    struct Counts: Sendable, Equatable {
        var started = 0
        var converted = 0
    }

    /// Apple's offer types by the names of the report's offer mix, in its order.
    static let typeNames = [(1, "introductory"), (2, "promotional"), (3, "offer_code"), (4, "win_back")]

    /// Per offer type name: only the types with an offer started or converted in the period.
    var byType: [String: Counts] = [:]
    /// The Server API knows the subscription (else `period_offers` is null).
    var isServed = true

    init(family: ReceiptFamily, plan: SubscriptionPlan, bundleId: String, now: Int64) {
        let served = LedgerExporter.isServed(family, bundleId: bundleId)
        self.init(
            transactions: served ? plan.timeline(at: now).transactions : [],
            after: SimTime.startOfDay(now),
            through: now
        )
        isServed = served
    }

    /// Counts `transactions` (one subscription's, at the end of the period) purchased after `start` and at or
    /// before `end`.
    init(transactions: [SimTransaction], after start: Int64, through end: Int64) {
        let ordered = transactions.sorted { $0.purchase < $1.purchase }
        for (index, t) in ordered.enumerated() where !t.familyShared && t.purchase > start && t.purchase <= end {
            let previous = index > 0 ? ordered[index - 1] : nil
            if let type = t.offer?.type, type != previous?.offer?.type {
                byType[Self.name(type), default: Counts()].started += 1
            }
            if t.offer == nil, let previous, let type = previous.offer?.type, Self.isRenewal(t, after: previous) {
                byType[Self.name(type), default: Counts()].converted += 1
            }
        }
    }

    static func name(_ type: Int) -> String {
        typeNames.first { $0.0 == type }?.1 ?? "offer_type_\(type)"
    }

    /// A renewal as the ledger kinds it: not the first transaction, not the one an upgrade started (the next after
    /// a transaction the upgrade replaced), not refunded or revoked.
    static func isRenewal(_ t: SimTransaction, after previous: SimTransaction) -> Bool {
        t.transactionId != t.originalTransactionId && !previous.isUpgraded && !t.isRefunded
    }

    /// `"period_offers": {"introductory": {"started": 1, "converted": 0}, ...}` (types in display order), `{}`
    /// without any, null when not served.
    func write(into w: inout JSONWriter) {
        w.key("period_offers")
        guard isServed else {
            w.null()
            return
        }
        w.beginObject()
        for name in Self.typeNames.map(\.1) + byType.keys.filter({ !Self.isTypeName($0) }).sorted() {
            guard let counts = byType[name] else { continue }
            w.key(name)
            w.beginObject()
            w.key("started")
            w.int(Int64(counts.started))
            w.key("converted")
            w.int(Int64(counts.converted))
            w.endObject()
        }
        w.endObject()
    }

    private static func isTypeName(_ name: String) -> Bool { typeNames.contains { $0.1 == name } }
}
