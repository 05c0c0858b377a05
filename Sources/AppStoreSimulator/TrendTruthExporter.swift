/// The trend side of the truth (docs/simulator.md, "Trends truth"): `trend-truth.jsonl`, what Apple implies on each of
/// `nights` consecutive nights (the export's `now`, then one day later each), per view, app, product and currency:
/// subscriptions active, in grace period and in billing retry, churned since the previous night, and MRR. Computed
/// from the timelines and `TruthRecord`'s decisions, never from what a client stored, following the definitions of
/// docs/reports.md ("Trends across nights"):
///
/// - a subscription counts when the view decides it (`expect` not `rejected`), in the row of its decided product and
///   of its newest transaction's currency (empty for the sandbox: test purchases are never money); on the first
///   night, not when a verifyReceipt client must leave it alone (`not_due`: a previous night verified it and nothing
///   announces its change), since a client counts a subscription from its first decision on;
/// - churned: active, in grace period or in billing retry the night before, expired now (not on the first night);
/// - MRR: each subscription active or in grace period, auto-renewing, whose newest transaction is not a free trial
///   nor a family member's copy, at the price it renews at normalised to a month (weekly x 52 / 12, monthly x 1,
///   yearly / 12), summed exactly and rounded once per row to the currency's minor unit, half away from zero. The
///   price it renews at: through the Server API the renewal info's `renewalPrice` and the renewing product's period;
///   through verifyReceipt (no price) the newest transaction's.
public struct TrendTruthExporter: Sendable {
    public let population: Population

    public init(population: Population) {
        self.population = population
    }

    /// The file `export --trend-nights` writes into its directory.
    public static let fileName = "trend-truth.jsonl"

    /// The two ways a client can ask: verifyReceipt, and the App Store Server API (where `TruthRecord` differs).
    enum View: String, CaseIterable {
        case verifyReceipt = "verify_receipt"
        case serverAPI = "server_api"
    }

    /// One subscription on one night, as the view decides it.
    struct Decided: Equatable {
        var state: String
        var productId: String
        var currency: String
        /// Twelve times its monthly price in milliunits (integers: weekly x 52, monthly x 12, yearly x 1); nil when
        /// it adds nothing to MRR.
        var mrrTwelfths: Int64?
    }

    /// The figures of one row (night, view, app, product, currency).
    struct Row {
        var active: Int64 = 0
        var gracePeriod: Int64 = 0
        var billingRetry: Int64 = 0
        var churned: Int64 = 0
        var mrrSubscriptions: Int64 = 0
        var mrrTwelfths: Int64 = 0
    }

    struct Key: Hashable, Comparable {
        var bundleId: String
        var productId: String
        var currency: String

        static func < (a: Key, b: Key) -> Bool {
            (a.bundleId, a.productId, a.currency) < (b.bundleId, b.productId, b.currency)
        }
    }

    /// What `view` decides for `plan` at `now`; nil when the view refuses it, or on the `firstNight` leaves it alone
    /// (the client counts it nowhere).
    func decided(
        _ family: ReceiptFamily,
        _ plan: SubscriptionPlan,
        at now: Int64,
        view: View,
        firstNight: Bool
    )
        -> Decided?
    {
        let truth = TruthRecord(family: family, plan: plan, at: now)
        let expect: TruthRecord.Expectation
        let state: String?
        let productId: String?
        let autoRenew: Bool?
        if view == .serverAPI, let other = truth.serverAPI {
            (expect, state, productId, autoRenew) = (other.expect, other.state, other.productId, other.autoRenew)
        } else {
            (expect, state, productId, autoRenew) = (truth.expect, truth.state, truth.productId, truth.autoRenew)
        }
        guard expect != .rejected, !(firstNight && expect == .notDue), let state, let productId else { return nil }
        // 21010 (`entitlement_ended`): no transactions are believed, so there is no price.
        let newest =
            expect == .entitlementEnded
            ? nil
            : plan.timeline(at: now).transactions.max {
                ($0.purchase, $0.transactionId) < ($1.purchase, $1.transactionId)
            }
        guard let newest, !family.sandbox else {
            return Decided(state: state, productId: productId, currency: "", mrrTwelfths: nil)
        }
        let storefront = Storefront.of(seed: population.seed, familyIndex: family.index)
        var twelfths: Int64?
        // A family member's copy is the purchaser's money: no MRR of its own.
        if ["active", "grace_period"].contains(state), autoRenew == true, !newest.isTrial, !newest.familyShared {
            var (price, period) = (storefront.price(of: newest, anchor: population.anchor), newest.product.period)
            // The Server API signs the next renewal's price (renewalPrice): MRR is what the subscription renews at.
            if view == .serverAPI, LedgerExporter.isServed(family, bundleId: population.bundleId) {
                let renewal = ServerAPIRenderer.renewalFacts(
                    population: population,
                    plan.timeline(at: now),
                    plan: plan,
                    family: family,
                    at: now
                )
                if let next = renewal.price, let nextPeriod = renewal.period { (price, period) = (next, nextPeriod) }
            }
            switch period {
            case .week: twelfths = price * 52
            case .month: twelfths = price * 12
            case .year: twelfths = price
            }
        }
        return Decided(state: state, productId: productId, currency: storefront.currency, mrrTwelfths: twelfths)
    }

    /// MRR in milliunits from its twelfths, rounded to the minor unit (milliunits) half away from zero.
    static func mrr(twelfths: Int64, minorUnit: Int64) -> Int64 {
        let scale = 12 * minorUnit
        return (twelfths + scale / 2) / scale * minorUnit
    }

    /// Writes `path`: `nights` nights from `start`, one day apart; per night the two views, rows by app, product and
    /// currency.
    public func export(to path: String, from start: Int64, nights: Int) throws {
        let file = try BufferedFile(path: path)
        let minorUnits = Dictionary(Storefront.all.map { ($0.currency, $0.minorUnit) }) { a, _ in a }
        for view in View.allCases {
            var previous: [UInt64: Decided] = [:]
            for night in 0..<nights {
                let now = start + Int64(night) * SimTime.day
                var rows: [Key: Row] = [:]
                var tonight: [UInt64: Decided] = [:]
                for family in population.families {
                    for plan in family.subscriptions {
                        guard let d = decided(family, plan, at: now, view: view, firstNight: night == 0) else {
                            continue
                        }
                        tonight[plan.originalTransactionId] = d
                        let key = Key(bundleId: family.appBundleId, productId: d.productId, currency: d.currency)
                        var row = rows[key, default: Row()]
                        switch d.state {
                        case "active": row.active += 1
                        case "grace_period": row.gracePeriod += 1
                        case "billing_retry": row.billingRetry += 1
                        default: break
                        }
                        if d.state == "expired", let before = previous[plan.originalTransactionId],
                            ["active", "grace_period", "billing_retry"].contains(before.state)
                        {
                            row.churned += 1
                        }
                        if let twelfths = d.mrrTwelfths {
                            row.mrrSubscriptions += 1
                            row.mrrTwelfths += twelfths
                        }
                        rows[key] = row
                    }
                }
                previous = tonight
                for key in rows.keys.sorted() {
                    let row = rows[key] ?? Row()
                    var w = JSONWriter(capacity: 400)
                    w.beginObject()
                    w.field("view", view.rawValue)
                    w.field("date", String(SimTime.rfc3339(now).prefix(10)))
                    w.field("as_of", SimTime.rfc3339(now))
                    w.field("bundle_id", key.bundleId)
                    w.field("product_id", key.productId)
                    w.field("currency", key.currency)
                    for (name, value) in [
                        ("active", row.active), ("grace_period", row.gracePeriod), ("billing_retry", row.billingRetry),
                        ("churned", row.churned), ("mrr_subscriptions", row.mrrSubscriptions),
                    ] {
                        w.key(name)
                        w.int(value)
                    }
                    w.key("mrr")
                    if key.currency.isEmpty {
                        w.null()
                    } else {
                        w.int(Self.mrr(twelfths: row.mrrTwelfths, minorUnit: minorUnits[key.currency] ?? 10))
                    }
                    w.endObject()
                    w.bytes.append(10)
                    try file.write(w.bytes)
                }
            }
        }
        try file.close()
    }
}
