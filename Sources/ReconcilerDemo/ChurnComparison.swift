import Foundation
import Postgres
import Reconciler

/// Compares report.html's "Churn, offers and price increases" figures of a first night that verified every row
/// (docs/reports.md) with what the simulator's `truth.jsonl` implies through the App Store Server API: lapses (a
/// decided row now expired or in billing retry that was entitled, or never decided, before) by Apple's expiration
/// intent, entitled rows by their price-increase status, and the offer mix of the night's period (offers started
/// and converted per offer type), which the simulator counts per subscription from its timelines
/// (`period_offers`, docs/simulator.md).
public struct ChurnComparison {
    public struct Report: Sendable {
        /// Per figure (`churn/customer_cancelled`, `price_increase/awaiting_consent`, `offers/introductory/started`,
        /// ...): (truth, report).
        public var figures: [String: (expected: Int, found: Int)] = [:]
        public var matches: Bool { !figures.isEmpty && figures.values.allSatisfy { $0.expected == $0.found } }

        public func lines() -> [String] {
            var lines = [
                "churn, offers and price increases vs truth.jsonl: "
                    + "\(figures.values.filter { $0.expected == $0.found }.count)/\(figures.count) figures match"
            ]
            let offers = ChurnAndOffers.offerTypes.map(\.1).compactMap { name -> String? in
                guard let started = figures["offers/\(name)/started"],
                    let converted = figures["offers/\(name)/converted"]
                else { return nil }
                return "\(name) \(started.found)/\(converted.found)"
            }
            if !offers.isEmpty { lines.append("  offers started/converted: " + offers.joined(separator: ", ")) }
            for (key, pair) in figures.sorted(by: { $0.key < $1.key }) where pair.expected != pair.found {
                lines.append("  \(key): expected \(pair.expected), reported \(pair.found)")
            }
            return lines
        }
    }

    let connection: PostgresConnection

    public init(connection: PostgresConnection) {
        self.connection = connection
    }

    /// Compares run `runId`'s report with `truthFile`, leaving out the `forged` subscriptions (refused, untouched).
    public func compare(truthFile: String, runId: Int64, forged: Set<String>) throws -> Report {
        guard let data = FileManager.default.contents(atPath: truthFile) else {
            throw UsageError("cannot read \(truthFile)")
        }
        var expected = ChurnAndOffers()
        for line in data.split(separator: UInt8(ascii: "\n")) where !line.isEmpty {
            guard var truth = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                let id = truth["original_transaction_id"] as? String
            else { throw UsageError("\(truthFile): not a truth record") }
            if let view = truth["server_api"] as? [String: Any] { truth.merge(view) { _, new in new } }
            guard truth["expect"] as? String == "decision", !forged.contains(id) else { continue }
            Self.add(truth, to: &expected)
        }
        let summary = try ReportGenerator(connection: connection).summary(runId: runId).summary
        let found = summary.churnAndOffers ?? ChurnAndOffers()
        var report = Report()
        for key in Set(expected.churnByReason.keys).union(found.churnByReason.keys) {
            report.figures["churn/\(key)"] = (expected.churnByReason[key] ?? 0, found.churnByReason[key] ?? 0)
        }
        let pairs = [
            ("awaiting_consent", expected.priceIncrease.awaitingConsent, found.priceIncrease.awaitingConsent),
            ("consented", expected.priceIncrease.consented, found.priceIncrease.consented),
            ("lapsed_declined", expected.priceIncrease.lapsedDeclined, found.priceIncrease.lapsedDeclined),
        ]
        for (key, wanted, reported) in pairs { report.figures["price_increase/\(key)"] = (wanted, reported) }
        for name in Set(expected.offers.keys).union(found.offers.keys) {
            let wanted = expected.offers[name] ?? ChurnAndOffers.OfferCounts()
            let reported = found.offers[name] ?? ChurnAndOffers.OfferCounts()
            report.figures["offers/\(name)/started"] = (wanted.started, reported.started)
            report.figures["offers/\(name)/converted"] = (wanted.converted, reported.converted)
        }
        return report
    }

    /// One decided record: its offers of the period, a lapse by its intent, an entitled row by its price-increase
    /// status.
    static func add(_ truth: [String: Any], to expected: inout ChurnAndOffers) {
        for (name, counts) in truth["period_offers"] as? [String: [String: Any]] ?? [:] {
            expected.offers[name, default: ChurnAndOffers.OfferCounts()].started +=
                (counts["started"] as? NSNumber)?.intValue ?? 0
            expected.offers[name, default: ChurnAndOffers.OfferCounts()].converted +=
                (counts["converted"] as? NSNumber)?.intValue ?? 0
        }
        let state = truth["state"] as? String
        let prior = (truth["prior_run"] as? [String: Any])?["state"] as? String
        let intent = (truth["expiration_intent"] as? NSNumber)?.intValue
        let wasEntitledOrUnknown = prior == nil || prior == "active" || prior == "grace_period"
        if state == "expired" || state == "billing_retry", wasEntitledOrUnknown {
            expected.churnByReason[ChurnAndOffers.reasonName(intent), default: 0] += 1
            if intent == 3 { expected.priceIncrease.lapsedDeclined += 1 }
        }
        guard state == "active" || state == "grace_period" else { return }
        switch (truth["price_increase_status"] as? NSNumber)?.intValue {
        case 0?: expected.priceIncrease.awaitingConsent += 1
        case 1?: expected.priceIncrease.consented += 1
        default: break
        }
    }
}
