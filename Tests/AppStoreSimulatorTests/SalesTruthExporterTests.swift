import Foundation
import Testing

@testable import AppStoreSimulator

/// `server-api/sales-truth.jsonl` (docs/simulator.md, "Sales truth"): every event of Apple's reports in the window
/// with the facts behind its differences, the lost orders' flagged, and the family copies Apple never reports.
@Suite struct SalesTruthExporterTests {
    static let now = SimTime.parseRFC3339("2026-11-27T23:00:00Z")!
    static let from = now - 40 * SimTime.day

    func lines(_ pop: Population) throws -> [[String: Any]] {
        let dir = temporaryDirectory("sales-truth")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try SalesTruthExporter(population: pop).export(
            to: dir + "/s.jsonl",
            from: Self.from,
            until: Self.now,
            asOf: Self.now
        )
        return try String(contentsOfFile: dir + "/s.jsonl", encoding: .utf8).split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    func transactions(_ families: [ReceiptFamily]) -> [SimTransaction] {
        families.flatMap { $0.subscriptions.flatMap { $0.timeline(at: Self.now).transactions } }
    }

    @Test func lostOrdersAndFamilyCopiesAreTheOnesTheWorldHolds() throws {
        let pop = Population(seed: 8, subscriptions: 1500, anchor: Self.now, lostOrders: 15)
        let all = try lines(pop)
        let id = { (line: [String: Any]) in line["transaction_id"] as? String ?? "" }
        let inWindow = { (t: SimTransaction) in t.purchase >= Self.from && t.purchase < Self.now }

        let lostPurchases = Set(
            all.filter { $0["lost_order"] as? Bool == true && $0["kind"] as? String == "purchase" }.map(id)
        )
        let expectedLost = Set(transactions(pop.lostOrders).filter(inWindow).map { String($0.transactionId) })
        #expect(!expectedLost.isEmpty)
        #expect(lostPurchases == expectedLost)

        let served = pop.families.filter { !$0.sandbox && LedgerExporter.isServed($0, bundleId: pop.bundleId) }
        let shared = Set(all.filter { $0["kind"] as? String == "family_shared" }.map(id))
        let expectedShared = Set(
            transactions(served).filter { $0.familyShared && inWindow($0) }.map { String($0.transactionId) }
        )
        #expect(!expectedShared.isEmpty)
        #expect(shared == expectedShared)
        let purchases = Set(all.filter { $0["kind"] as? String == "purchase" }.map(id))
        #expect(purchases.isDisjoint(with: shared))
    }

    @Test func eachEventCarriesItsTaxAndTheProceedsItImplies() throws {
        let pop = Population(seed: 8, subscriptions: 800, anchor: Self.now)
        let all = try lines(pop).filter { $0["kind"] as? String == "purchase" }
        let taxes: [String: Int64] = ["US": 0, "CA": 0, "BR": 0, "GB": 20, "DE": 19, "JP": 10]
        #expect(Set(all.compactMap { $0["country"] as? String }) == Set(taxes.keys))
        for line in all {
            let country = line["country"] as? String ?? ""
            let tax = (line["tax_percent"] as? NSNumber)?.int64Value
            #expect(tax == taxes[country], "\(line)")
            let price = (line["customer_price"] as? NSNumber)?.int64Value ?? 0
            let proceeds = (line["proceeds"] as? NSNumber)?.int64Value ?? 0
            let share: Int64 = line["after_one_year"] as? Bool == true ? 85 : 70
            let net = 100 + (tax ?? 0)
            #expect(abs(proceeds * net - price * share) <= 1000 * net, "\(line)")
            let day = line["pacific_day"] as? String ?? ""
            let settled = line["settlement_day"] as? String ?? ""
            #expect(settled >= day, "\(line)")
        }
    }
}
