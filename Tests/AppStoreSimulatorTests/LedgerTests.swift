import Foundation
import Testing

@testable import AppStoreSimulator

@Suite struct LedgerTests {
    static let now = PopulationTests.now

    static func lines(_ path: String) throws -> [[String: Any]] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    @Test func ledgerAndRevenueAgreeWithTheServerAPI() async throws {
        try await withSimulator(subscriptions: 300, configure: { $0.serverAPILimits = .unlimited }) { server in
            let dir = FileManager.default.temporaryDirectory
                .appendingPathComponent("sim-ledger-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: dir) }
            _ = try PopulationExporter(population: server.population).export(to: dir, now: Self.now)
            let ledger = try Self.lines(dir + "/server-api/ledger.jsonl")
            let revenueData = try Data(contentsOf: URL(fileURLWithPath: dir + "/server-api/revenue.json"))
            let revenue = try #require(try JSONSerialization.jsonObject(with: revenueData) as? [String: Any])
            let currencies = try #require(revenue["currencies"] as? [String: [String: Int64]])
            #expect(currencies.count >= 4 && currencies["JPY"] != nil && currencies["USD"] != nil)

            let client = try await ServerAPIClient.connect(to: server)
            var gross: [String: Int64] = [:]
            var refunded: [String: Int64] = [:]
            var sawPriceChange = false
            var sawProrated = false
            for line in ledger {
                let otid = try #require(line["original_transaction_id"] as? String)
                let txns = try #require(line["transactions"] as? [[String: Any]])
                let sandbox = line["environment"] as? String == "Sandbox"
                let currency = try #require(line["currency"] as? String)
                // The Server API's history shows the same transactions at the same prices.
                let (payloads, _) = try await ServerAPIHistoryTests.pageAll(
                    client,
                    ServerAPIClient.base(sandbox: sandbox) + "/inApps/v2/history/\(otid)"
                )
                let apiPrices = Dictionary(
                    uniqueKeysWithValues: payloads.compactMap { p -> (String, Int64)? in
                        guard p["originalTransactionId"] as? String == otid, let id = p["transactionId"] as? String,
                            let price = (p["price"] as? NSNumber)?.int64Value, p["currency"] as? String == currency
                        else { return nil }
                        return (id, price)
                    }
                )
                #expect(apiPrices.count == txns.count, "\(otid)")
                var paid: [String: Set<Int64>] = [:]
                for t in txns {
                    let id = try #require(t["transaction_id"] as? String)
                    let price = try #require((t["price"] as? NSNumber)?.int64Value)
                    #expect(apiPrices[id] == price)
                    if currency == "JPY" { #expect(price % 1000 == 0) }
                    if t["offer"] == nil || t["offer"] is NSNull {
                        paid[t["product_id"] as? String ?? "", default: []].insert(price)
                    }
                    // A family member's copy is never money (the purchaser's transaction is).
                    let ownership = t["ownership_type"] as? String ?? ""
                    if !sandbox && ownership != "FAMILY_SHARED" {
                        gross[currency, default: 0] += price
                        let amount = (t["refunded_amount"] as? NSNumber)?.int64Value ?? -1
                        refunded[currency, default: 0] += amount
                        switch t["revocation_type"] as? String {
                        case "REFUND_FULL"?: #expect(amount == price)
                        case "REFUND_PRORATED"?:
                            sawProrated = true
                            #expect(amount < price && amount >= 0)
                        default: #expect(amount == 0)
                        }
                    }
                }
                sawPriceChange = sawPriceChange || paid.values.contains { $0.count > 1 }
            }
            #expect(sawPriceChange, "some subscription paid two list prices over its life")
            // One-time purchases count like subscription transactions (refunds are always full).
            try Self.addOneTimeMoney(dir, gross: &gross, refunded: &refunded)
            for (currency, totals) in currencies {
                #expect(totals["gross"] == gross[currency] ?? 0, "\(currency)")
                #expect(totals["refunded"] == refunded[currency] ?? 0, "\(currency)")
                #expect(totals["net"] == (totals["gross"] ?? 0) - (totals["refunded"] ?? 0))
            }
            #expect(refunded.values.reduce(0, +) > 0)
            #expect(sawProrated, "some refund is prorated")
            await client.close()
        }
    }
}

extension LedgerTests {
    /// Adds the gross and refunded one-time money per currency of `one-time-charges.jsonl`.
    static func addOneTimeMoney(_ dir: String, gross: inout [String: Int64], refunded: inout [String: Int64]) throws {
        for charge in try lines(dir + "/server-api/one-time-charges.jsonl") {
            let currency = charge["currency"] as? String ?? ""
            let price = (charge["price"] as? NSNumber)?.int64Value ?? 0
            gross[currency, default: 0] += price
            if charge["refunded"] as? Bool == true { refunded[currency, default: 0] += price }
        }
    }
}
