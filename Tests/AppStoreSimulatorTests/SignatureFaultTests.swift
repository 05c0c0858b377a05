import Foundation
import Testing

@testable import AppStoreSimulator

@Suite struct SignatureFaultTests {
    @Test func eachSignatureFaultIsRefusedByTheClientAndCounted() async throws {
        let rates: [SignatureFault: Double] = [
            .foreignChain: 0.1, .leafWithoutOID: 0.1, .expiredLeaf: 0.1,
            .tamperedPayload: 0.1,
        ]
        try await withSimulator(
            subscriptions: 40,
            configure: {
                $0.serverAPILimits = .unlimited
                $0.faults.signatureRates = rates
            }
        ) { server in
            let client = try await ServerAPIClient.connect(to: server)
            let family = try #require(
                server.population.families.first {
                    !$0.sandbox && $0.fixedStatus == nil && $0.bundleId == server.population.bundleId
                }
            )
            let plan = server.configuration.faults
            var seen: [SignatureFault: Int] = [:]
            for n in 0..<400 as Range<UInt64> {
                let r = try await client.get("/inApps/v1/subscriptions/\(family.primaryOriginalTransactionId)")
                #expect(r.status == 200)
                let entry = try #require(
                    ((r.json?["data"] as? [[String: Any]])?.first?["lastTransactions"]
                        as? [[String: Any]])?.first
                )
                let jws = try #require(entry["signedTransactionInfo"] as? String)
                let expected = plan.decideSignature(sequence: n)
                do {
                    let payload = try await client.verifier.verify(jws)
                    #expect(expected == nil, "\(String(describing: expected)) was accepted")
                    #expect((payload["expiresDate"] as? NSNumber)?.int64Value != 4_102_444_800_000)
                } catch {
                    #expect(expected != nil, "a clean answer was refused: \(error)")
                }
                if let expected { seen[expected, default: 0] += 1 }
            }
            let stats = try #require(try await TestConnection.once(port: server.port, .GET, "/_stats").json)
            let counted = try #require(stats["server_api_faults"] as? [String: Int])
            for kind in SignatureFault.allCases {
                #expect(counted[kind.rawValue] == seen[kind], "\(kind)")
                #expect(abs(Double(seen[kind] ?? 0) - 40) <= 16, "\(kind): \(seen[kind] ?? 0)")
            }
            await client.close()
        }
    }
}
