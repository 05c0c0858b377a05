import Foundation

/// Writes `purchases.jsonl` (what the app stored), `truth.jsonl` (what Apple implies at `now`, with the renewal
/// info the Server API signs and the offers of a first run's period: `RenewalTruth`, `OfferTruth`) and
/// `server-api/` (the root certificate, the In-App Purchase key and its ids: `ServerAPIIdentity`; the ledger
/// and revenue per currency: `LedgerExporter`).
///
/// Output is byte-identical for the same inputs (families in index order, keys in a fixed order), except the
/// certificates' ECDSA signatures in `server-api/root.pem`.
public struct PopulationExporter: Sendable {
    /// Export failure naming the file and what went wrong.
    public struct ExportError: Error, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "cannot write \(path): \(reason)" }
    }

    /// Number of subscriptions (rows) per scenario, in `Scenario.allCases` order.
    public struct Summary: Sendable, CustomStringConvertible {
        public var counts: [(Scenario, Int)]
        public var total: Int { counts.reduce(0) { $0 + $1.1 } }
        public var description: String {
            "subscriptions=\(total) "
                + counts.filter { $0.1 > 0 }.map { "\($0.0.rawValue)=\($0.1)" }.joined(separator: " ")
        }
    }

    public let population: Population
    public let renderer: ResponseRenderer

    public init(population: Population) {
        self.population = population
        self.renderer = ResponseRenderer(population: population)
    }

    /// The purchases row for one subscription of a family.
    public func purchaseLine(family: ReceiptFamily, plan: SubscriptionPlan, receipt: String) -> [UInt8] {
        let stored = family.storedRow(plan)
        var w = JSONWriter(capacity: receipt.utf8.count + 400)
        w.beginObject()
        w.field("user_id", family.userId)
        w.field("product_id", stored.productId)
        w.field("original_transaction_id", String(plan.originalTransactionId))
        w.field("latest_receipt", receipt)
        w.field("expires_at", SimTime.rfc3339(stored.expires))
        w.field("environment", family.sandbox ? "Sandbox" : "Production")
        // The app stored its own bundle id even for a foreign receipt (it trusted the client).
        w.field("bundle_id", family.appBundleId)
        // The customer's currency, as StoreKit told the app at purchase (`Transaction.currency`).
        w.field("currency", Storefront.of(seed: population.seed, familyIndex: family.index).currency)
        // The app's own account id it passed at purchase (StoreKit's `appAccountToken`), when it passed one.
        if let token = AppAccountToken.of(seed: population.seed, family: family) { w.field("app_account_token", token) }
        w.endObject()
        w.bytes.append(10)
        return w.bytes
    }

    /// Writes both files into `directory` (created if missing) and returns the scenario counts.
    /// `faultySubscriptionRate`: also write `server-api/signature-faults.jsonl`, the subscriptions whose Server
    /// API answers `serve` with the same `--signature-faulty-subscriptions` signs with a fault.
    public func export(to directory: String, now: Int64, faultySubscriptionRate: Double = 0) throws -> Summary {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw ExportError(path: directory, reason: "cannot create directory (\(error))")
        }
        let purchasesPath = directory + "/purchases.jsonl"
        let truthPath = directory + "/truth.jsonl"
        let purchases = try BufferedFile(path: purchasesPath)
        let truth = try BufferedFile(path: truthPath)
        var counts: [Scenario: Int] = [:]
        let identity = ServerAPIIdentity(
            seed: population.seed,
            anchor: population.anchor,
            bundleId: population.bundleId
        )
        let serverAPI = ServerAPIRenderer(population: population, identity: identity)
        for family in population.families {
            let receipt = renderer.storedReceipt(family)
            for plan in family.subscriptions {
                try purchases.write(purchaseLine(family: family, plan: plan, receipt: receipt))
                let renewal = RenewalTruth(renderer: serverAPI, family: family, plan: plan, now: now)
                let offers = OfferTruth(family: family, plan: plan, bundleId: population.bundleId, now: now)
                try truth.write(
                    TruthRecord(family: family, plan: plan, at: now).jsonLine {
                        renewal.write(into: &$0)
                        offers.write(into: &$0)
                    }
                )
                counts[family.scenario, default: 0] += 1
            }
        }
        try purchases.close()
        try truth.close()
        try identity.export(to: directory + "/server-api")
        try LedgerExporter(population: population).export(to: directory + "/server-api", now: now)
        try NotificationsTruthExporter(population: population).export(to: directory + "/server-api", now: now)
        try CatalogExporter(population: population).export(to: directory)
        if faultySubscriptionRate > 0 {
            let faults = try BufferedFile(path: directory + "/server-api/signature-faults.jsonl")
            for family in population.families where LedgerExporter.isServed(family, bundleId: population.bundleId) {
                guard let fault = SignatureFault.forFamily(family, seed: population.seed, rate: faultySubscriptionRate)
                else { continue }
                for plan in family.subscriptions {
                    var w = JSONWriter(capacity: 160)
                    w.beginObject()
                    w.field("original_transaction_id", String(plan.originalTransactionId))
                    w.field("fault", fault.rawValue)
                    w.field("expect", "refused_row_untouched")
                    w.endObject()
                    w.bytes.append(10)
                    try faults.write(w.bytes)
                }
            }
            try faults.close()
        }
        return Summary(counts: Scenario.allCases.map { ($0, counts[$0] ?? 0) })
    }
}
