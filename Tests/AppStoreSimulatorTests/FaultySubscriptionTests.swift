import Foundation
import Testing

@testable import AppStoreSimulator

/// `--signature-faulty-subscriptions`: the subscriptions `export` lists as "refused, row untouched" are exactly
/// those whose Server API answers a client must refuse.
@Suite struct FaultySubscriptionTests {
    @Test func exportedFaultySubscriptionsAreExactlyTheRefusedOnes() async throws {
        let rate = 0.1
        try await withSimulator(
            subscriptions: 300,
            configure: {
                $0.serverAPILimits = .unlimited
                $0.faults.faultySubscriptionRate = rate
            }
        ) { server in
            let dir = FileManager.default.temporaryDirectory
                .appendingPathComponent("sim-faulty-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: dir) }
            _ = try PopulationExporter(population: server.population)
                .export(to: dir, now: PopulationTests.now, faultySubscriptionRate: rate)
            let listed = try LedgerTests.lines(dir + "/server-api/signature-faults.jsonl")
            #expect(listed.allSatisfy { $0["expect"] as? String == "refused_row_untouched" })
            let faulty = Set(listed.compactMap { $0["original_transaction_id"] as? String })
            #expect(faulty.count >= 10 && faulty.count <= 80)
            #expect(Set(listed.compactMap { $0["fault"] as? String }).count == SignatureFault.allCases.count)

            let client = try await ServerAPIClient.connect(to: server)
            var refused: Set<String> = []
            var checked = 0
            for family in server.population.families
            where family.fixedStatus != 21010 && family.bundleId == server.population.bundleId {
                let base = ServerAPIClient.base(sandbox: family.sandbox)
                for plan in family.subscriptions {
                    let r = try await client.get(base + "/inApps/v1/subscriptions/\(plan.originalTransactionId)")
                    let groups = (r.json?["data"] as? [[String: Any]]) ?? []
                    let entries = groups.flatMap { ($0["lastTransactions"] as? [[String: Any]]) ?? [] }
                    let entry = try #require(entries.first)
                    do {
                        _ = try await client.verifier.verify(try #require(entry["signedTransactionInfo"] as? String))
                    } catch is TestJWSVerifier.Refusal {
                        refused.insert(String(plan.originalTransactionId))
                    }
                    checked += 1
                }
            }
            #expect(checked > 250)
            #expect(refused == faulty)
            await client.close()
        }
    }
}
