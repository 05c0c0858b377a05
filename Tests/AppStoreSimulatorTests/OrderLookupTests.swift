import Foundation
import Testing

@testable import AppStoreSimulator

/// Look Up Order ID (docs/simulator.md, "Look Up Order ID"): a known order answers its signed transaction, verified
/// to the population's root; unknown, sandbox and malformed ids answer Apple's status 1 or 400; the endpoint has its
/// own 10/s limit and needs the JWT like every other.
@Suite struct OrderLookupTests {
    static let now = PopulationTests.now

    @Test func orderIdsReadBackToTheirTransaction() {
        let codec = OrderIdCodec(seed: 42)
        let id = codec.idBase + 123 * 10_000 + 7
        let order = codec.orderId(of: id)
        #expect(order?.count == 10 && order?.hasPrefix("M") == true)
        #expect(order.flatMap { codec.transactionId(of: Substring($0)) } == id)
        #expect(order.flatMap { codec.transactionId(of: Substring($0.lowercased())) } == id)
        #expect(OrderIdCodec(seed: 42).orderId(of: id) == order)
        #expect(OrderIdCodec(seed: 43).orderId(of: id) != order)
        #expect(codec.transactionId(of: "X123456789") == nil)
    }

    @Test func knownOrderAnswersItsSignedTransaction() async throws {
        try await withSimulator(subscriptions: 60, configure: { $0.serverAPILimits = .unlimited }) { server in
            let client = try await ServerAPIClient.connect(to: server)
            let family = try #require(
                server.population.families.first {
                    !$0.sandbox && $0.fixedStatus == nil && $0.bundleId == server.population.bundleId
                }
            )
            let transaction = try #require(family.subscriptions.first?.timeline(at: Self.now).transactions.last)
            let orderId = try #require(server.serverAPI.orderIds.orderId(of: transaction.transactionId))
            let r = try await client.get("/inApps/v1/lookup/\(orderId)")
            #expect(r.status == 200)
            let body = try #require(r.json)
            #expect(body["status"] as? Int == 0)
            let signed = try #require(body["signedTransactions"] as? [String])
            #expect(signed.count == 1)
            let payload = try await client.verifier.verify(signed[0])
            #expect(payload["transactionId"] as? String == String(transaction.transactionId))
            #expect(
                payload["originalTransactionId"] as? String == String(family.subscriptions[0].originalTransactionId)
            )

            // Unknown to Apple: status 1 and no transactions; so is every order asked of the sandbox.
            let unknown = try #require(try await client.get("/inApps/v1/lookup/MZZZZZZZZZ").json)
            #expect(unknown["status"] as? Int == 1 && unknown["signedTransactions"] == nil)
            let sandbox = try #require(try await client.get("/sandbox/inApps/v1/lookup/\(orderId)").json)
            #expect(sandbox["status"] as? Int == 1)
            // Not letters and digits: 400, 4000000.
            let bad = try await client.get("/inApps/v1/lookup/M-12%2034")
            #expect(bad.status == 400 && bad.json?["errorCode"] as? Int == 4_000_000)
            // No token: 401.
            let anonymous = try await TestConnection.once(port: server.port, .GET, "/inApps/v1/lookup/\(orderId)")
            #expect(anonymous.status == 401)
            await client.close()
        }
    }

    @Test func orderLookupHasItsOwnLimitOfTenASecond() async throws {
        try await withSimulator(subscriptions: 20) { server in
            let client = try await ServerAPIClient.connect(to: server)
            var limited = 0
            let started = Date()
            for _ in 0..<25 {
                let r = try await client.get("/inApps/v1/lookup/MZZZZZZZZZ")
                if r.status == 429 {
                    limited += 1
                    #expect(r.json?["errorCode"] as? Int == 4_290_000 && r.header("Retry-After") != nil)
                }
            }
            // 25 in a row within a second: some are limited (a loaded machine may spread them over several
            // seconds; the peak below is the hard check).
            if Date().timeIntervalSince(started) < 1 { #expect(limited > 0) }
            let stats = try #require(try await TestConnection.once(port: server.port, .GET, "/_stats").json)
            let limits = try #require(stats["server_api_limits"] as? [String: [String: Any]])
            #expect(limits["/inApps/v1/lookup"]?["limit_per_second"] as? Int == 10)
            #expect((limits["/inApps/v1/lookup"]?["peak_admitted_per_second"] as? Int ?? 99) <= 10)
            await client.close()
        }
    }
}
