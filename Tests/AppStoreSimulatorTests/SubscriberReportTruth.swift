import Foundation
import TestSupport

@testable import AppStoreSimulator

/// What the simulator's truth implies for a Subscriber report, computed the test's own way: Pacific dates with
/// Foundation's `Calendar`, the served customers' production transactions (`ledger.jsonl`'s) and their refunds
/// (docs/simulator.md, "App Store Connect reports"), and the lost orders'.
enum SubscriberReportTruth {
    static let calendar: Calendar = {
        var c = Calendar(identifier: .gregorian)
        c.timeZone = TimeZone(identifier: "America/Los_Angeles")!
        return c
    }()

    static func pacificDate(_ ms: Int64) -> String {
        let c = calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: Double(ms) / 1000))
        return String(format: "%04d-%02d-%02d", c.year ?? 0, c.month ?? 0, c.day ?? 0)
    }

    /// The instant (ms) the Pacific day after `date` begins.
    static func endOfPacificDay(_ date: String) -> Int64 {
        let parts = date.split(separator: "-").compactMap { Int($0) }
        let start = calendar.date(from: DateComponents(year: parts[0], month: parts[1], day: parts[2]))!
        let next = calendar.date(byAdding: .day, value: 1, to: start)!
        return Int64(next.timeIntervalSince1970 * 1000)
    }

    /// One row's identity in a report: product, price, currency, country, refund, units.
    static func key(_ row: [String: String]) -> String {
        [
            row["Subscription Apple ID"], row["Customer Price"], row["Customer Currency"], row["Country"],
            row["Refund"], row["Units"],
        ].map { $0 ?? "?" }.joined(separator: "|")
    }

    /// The sorted row keys the truth implies for the Pacific `date`.
    static func expectedKeys(_ population: Population, date: String) -> [String] {
        let asOf = endOfPacificDay(date) - 1
        var keys: [String] = []
        let served = population.families.filter {
            !$0.sandbox && $0.bundleId == population.bundleId && $0.fixedStatus != 21010
        }
        // The lost orders' sales are Apple's like any other (docs/simulator.md, "Lost orders").
        for family in served + population.lostOrders {
            let s = Storefront.of(seed: population.seed, familyIndex: family.index)
            for plan in family.subscriptions {
                for t in plan.timeline(at: asOf).transactions where !t.familyShared {
                    let appleId = population.catalog.appleId(of: t.product)
                    let price = s.price(of: t, anchor: population.anchor)
                    let fields = { (amount: String, refund: String, units: String) in
                        [appleId, amount, s.currency, s.country, refund, units].joined(separator: "|")
                    }
                    if pacificDate(t.purchase) == date { keys.append(fields(s.decimal(price), "", "1")) }
                    guard let r = ServerAPIRenderer.revocation(of: t, seed: population.seed), r.type != "FAMILY_REVOKE",
                        pacificDate(r.date) == date
                    else { continue }
                    let refunded = LedgerExporter.refunded(price: price, r.percentage, minorUnit: s.minorUnit)
                    if refunded > 0 { keys.append(fields("-" + s.decimal(refunded), "Yes", "-1")) }
                }
            }
        }
        return keys.sorted()
    }
}
