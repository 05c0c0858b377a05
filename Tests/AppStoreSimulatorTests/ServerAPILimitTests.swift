import Foundation
import Testing

@testable import AppStoreSimulator

@Suite struct ServerAPILimitTests {
    @Test func perEndpointLimitsAnswer429WithRetryAfterInUnixMilliseconds() async throws {
        try await withSimulator(subscriptions: 40) { server in
            let client = try await ServerAPIClient.connect(to: server)
            let production = try #require(
                server.population.families.first {
                    !$0.sandbox && $0.fixedStatus == nil && $0.bundleId == server.population.bundleId
                }
            )
            let sandbox = try #require(server.population.families.first { $0.sandbox })
            var ok = 0
            var limited = 0
            let started = Int64(Date().timeIntervalSince1970 * 1000)
            for _ in 0..<120 {
                let r = try await client.get("/inApps/v1/subscriptions/\(production.primaryOriginalTransactionId)")
                if r.status == 200 { ok += 1 }
                if r.status == 429 {
                    limited += 1
                    #expect(r.json?["errorCode"] as? Int == 4_290_000)
                    let retryAt = try #require(r.header("Retry-After").flatMap { Int64($0) })
                    #expect(retryAt > started && retryAt <= Int64(Date().timeIntervalSince1970 * 1000) + 1100)
                }
            }
            let elapsed = Int64(Date().timeIntervalSince1970 * 1000) - started
            // 50 a second: at most 50 in the first second, 100 if the loop ran into a second second.
            #expect(ok >= 50 && ok <= (elapsed < 1000 ? 50 : 100 + 50 * Int(elapsed / 1000)))
            #expect(limited == 120 - ok)
            // Another endpoint has its own budget; sandbox has 10% of production's.
            #expect(
                try await client.get("/inApps/v1/transactions/\(production.primaryOriginalTransactionId)").status
                    == 200
            )
            var sandboxOK = 0
            var sandboxLimited = 0
            for _ in 0..<12 {
                let r = try await client.get("/sandbox/inApps/v1/subscriptions/\(sandbox.primaryOriginalTransactionId)")
                if r.status == 200 { sandboxOK += 1 }
                if r.status == 429 { sandboxLimited += 1 }
            }
            // 12 requests in a row: at least 5 are admitted; the rest are limited unless a loaded machine
            // spread them over several seconds (the peak below is the hard check).
            #expect(sandboxOK >= 5 && sandboxOK + sandboxLimited == 12)
            let stats = try #require(try await TestConnection.once(port: server.port, .GET, "/_stats").json)
            let limits = try #require(stats["server_api_limits"] as? [String: [String: Any]])
            #expect(limits["/inApps/v1/subscriptions"]?["limit_per_second"] as? Int == 50)
            // Never more than the limit in any second; exactly the limit when some requests were refused (a
            // 429 is answered only after 50 were admitted within the last second).
            let peak = try #require(limits["/inApps/v1/subscriptions"]?["peak_admitted_per_second"] as? Int)
            #expect(peak <= 50)
            if limited > 0 { #expect(peak == 50) }
            #expect(limits["/inApps/v1/subscriptions"]?["rate_limited"] as? Int == limited)
            #expect(limits["/sandbox/inApps/v1/subscriptions"]?["limit_per_second"] as? Int == 5)
            #expect((limits["/sandbox/inApps/v1/subscriptions"]?["peak_admitted_per_second"] as? Int ?? 99) <= 5)
            await client.close()
        }
    }

    @Test func faultSwitchesApplyToTheServerAPIAtTheirRates() async throws {
        let rates: [FaultKind: Double] = [
            .http500: 0.05, .http503: 0.05, .http429: 0.05, .status21005: 0.05,
            .status211xx: 0.05, .malformedJSON: 0.05,
        ]
        try await withSimulator(
            subscriptions: 40,
            configure: {
                $0.serverAPILimits = .unlimited
                $0.faults = FaultPlan(seed: 21, rates: rates, retryAfterSeconds: 2)
            }
        ) { server in
            let client = try await ServerAPIClient.connect(to: server)
            let family = try #require(
                server.population.families.first {
                    !$0.sandbox && $0.fixedStatus == nil && $0.bundleId == server.population.bundleId
                }
            )
            let plan = FaultPlan(seed: 21, rates: rates)
            var seen: [FaultKind: Int] = [:]
            for n in 0..<1000 as Range<UInt64> {
                let r = try await client.get("/inApps/v1/transactions/\(family.primaryOriginalTransactionId)")
                let expected = plan.decide(sequence: n)
                switch expected {
                case nil: #expect(r.status == 200 && r.json?["signedTransactionInfo"] != nil)
                case .http500?: #expect(r.status == 500)
                case .http503?: #expect(r.status == 503)
                case .http429?:
                    #expect(r.status == 429 && r.json?["errorCode"] as? Int == 4_290_000)
                    #expect((r.header("Retry-After").flatMap { Int64($0) } ?? 0) > 1_700_000_000_000)
                case .status21005?: #expect(r.status == 500 && r.json?["errorCode"] as? Int == 5_000_001)
                case .status211xx?:
                    #expect([4_040_002, 4_040_004, 4_040_006, 5_000_001].contains(r.json?["errorCode"] as? Int ?? 0))
                case .malformedJSON?: #expect(r.status == 200 && r.json == nil)
                default: Issue.record("unexpected fault \(String(describing: expected))")
                }
                if let expected { seen[expected, default: 0] += 1 }
            }
            let stats = try #require(try await TestConnection.once(port: server.port, .GET, "/_stats").json)
            let faults = try #require(stats["faults"] as? [String: Int])
            for (kind, rate) in rates {
                #expect(faults[kind.rawValue] == seen[kind] ?? 0)
                #expect(abs(Double(seen[kind] ?? 0) - rate * 1000) <= 0.4 * rate * 1000, "\(kind)")
            }
            await client.close()
        }
    }
}

extension ServerAPILimitTests {
    @Test func connectionFaultsApplyToTheServerAPI() async throws {
        for (kind, check) in [(FaultKind.reset, "closed"), (.truncated, "closed"), (.hang, "closed")] {
            try await withSimulator(
                subscriptions: 20,
                configure: {
                    $0.serverAPILimits = .unlimited
                    $0.faults = FaultPlan(seed: 21, rates: [kind: 1], hangMilliseconds: 50)
                }
            ) { server in
                let client = try await ServerAPIClient.connect(to: server)
                let family = try #require(server.population.families.first { !$0.sandbox && $0.fixedStatus == nil })
                await #expect(throws: TestClientError.self, "\(kind) \(check)") {
                    _ = try await client.get("/inApps/v1/transactions/\(family.primaryOriginalTransactionId)")
                }
                let stats = try #require(try await TestConnection.once(port: server.port, .GET, "/_stats").json)
                #expect((stats["faults"] as? [String: Int])?[kind.rawValue] == 1)
                await client.close()
            }
        }
    }
}
