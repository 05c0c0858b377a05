import Crypto
import Foundation
import Testing

@testable import AppStoreSimulator

@Suite struct ServerAPITests {
    static let now = PopulationTests.now

    @Test func everyTokenDefectIs401AndCounted() async throws {
        try await withSimulator(subscriptions: 40, configure: { $0.serverAPILimits = .unlimited }) { server in
            let client = try await ServerAPIClient.connect(to: server)
            defer { Task { await client.close() } }
            let id = try #require(
                server.population.families.first {
                    !$0.sandbox && $0.fixedStatus == nil
                        && $0.bundleId == server.population.bundleId
                }
            )?.primaryOriginalTransactionId
            let path = "/inApps/v1/transactions/\(try #require(id))"
            #expect(try await client.get(path).status == 200)
            let good = client.token
            var defects: [(String, TestAPIToken)] = []
            var t = good
            t.keyId = "WRONGKEY00"
            defects.append(("kid", t))
            t = good
            t.issuerId = UUID().uuidString.lowercased()
            defects.append(("iss", t))
            t = good
            t.audience = "appstoreconnect-v2"
            defects.append(("aud", t))
            t = good
            t.bundleId = "com.example.other"
            defects.append(("bid", t))
            t = good
            t.issuedAt -= 3600
            defects.append(("expired", t))
            t = good
            t.lifetime = 3601
            defects.append(("exp_over_60_minutes", t))
            t = good
            t.signingKey = P256.Signing.PrivateKey()
            defects.append(("signature", t))
            t = good
            t.alg = "ES384"
            defects.append(("algorithm", t))
            for (_, token) in defects {
                let r = try await client.get(path, token: token)
                #expect(r.status == 401)
                #expect(r.json == nil)
            }
            let missing = try await client.connection.send(.GET, path)
            #expect(missing.status == 401)
            let stats = try #require(try await TestConnection.once(port: server.port, .GET, "/_stats").json)
            let failures = try #require(stats["auth_failures"] as? [String: Int])
            for (reason, _) in defects { #expect(failures[reason] == 1, "\(reason)") }
            #expect(failures["missing"] == 1)
            let paths = try #require(stats["paths"] as? [String: [String: Any]])
            let counts = try #require(paths["/inApps/v1/transactions"]?["http_status"] as? [String: Int])
            #expect(counts["401"] == defects.count + 1 && counts["200"] == 1)
            // The good token still works after the refusals (the connection's cache is per token).
            #expect(try await client.get(path).status == 200)
        }
    }

    @Test func errorsForUnknownInvalidAndOtherEnvironmentIDs() async throws {
        try await withSimulator(subscriptions: 80, configure: { $0.serverAPILimits = .unlimited }) { server in
            let client = try await ServerAPIClient.connect(to: server)
            defer { Task { await client.close() } }
            let families = server.population.families
            let production = try #require(families.first { !$0.sandbox && $0.fixedStatus == nil })
            let sandbox = try #require(families.first { $0.sandbox })
            for endpoint in ["/inApps/v1/transactions/", "/inApps/v1/subscriptions/"] {
                for (path, code) in [
                    (endpoint + "\(sandbox.primaryOriginalTransactionId)", 4_040_010),
                    ("/sandbox" + endpoint + "\(production.primaryOriginalTransactionId)", 4_040_010),
                    (endpoint + "12345", 4_040_010),
                    (endpoint + "12a45", 4_000_006),
                    ("/sandbox" + endpoint + "-1", 4_000_006),
                ] {
                    let r = try await client.get(path)
                    #expect(r.status == (code == 4_000_006 ? 400 : 404), "\(path)")
                    #expect(r.json?["errorCode"] as? Int == code, "\(path)")
                    #expect(r.json?["errorMessage"] is String)
                }
            }
            let good = try await client.get("/sandbox/inApps/v1/transactions/\(sandbox.primaryOriginalTransactionId)")
            #expect(good.status == 200)
        }
    }

    /// Every subscription: statuses and transaction info agree with the truth and with the timeline
    /// verifyReceipt renders from; every JWS verifies against the exported root.
    @Test func statusesAndTransactionsAgreeWithTheTruth() async throws {
        try await withSimulator(subscriptions: 300, configure: { $0.serverAPILimits = .unlimited }) { server in
            let client = try await ServerAPIClient.connect(to: server)
            defer { Task { await client.close() } }
            let stateOfStatus = [1: "active", 2: "expired", 3: "billing_retry", 4: "grace_period", 5: "revoked"]
            var checked = 0
            for family in server.population.families {
                let base = ServerAPIClient.base(sandbox: family.sandbox)
                for plan in family.subscriptions {
                    let truth = TruthRecord(family: family, plan: plan, at: Self.now)
                    let r = try await client.get(base + "/inApps/v1/subscriptions/\(plan.originalTransactionId)")
                    if family.fixedStatus == 21010 || family.bundleId != server.population.bundleId {
                        #expect(r.json?["errorCode"] as? Int == 4_040_010)
                        continue
                    }
                    #expect(r.status == 200)
                    let body = try #require(r.json)
                    #expect(body["environment"] as? String == truth.environment)
                    #expect(body["bundleId"] as? String == family.bundleId)
                    if !family.sandbox {
                        #expect((body["appAppleId"] as? NSNumber)?.int64Value == server.serverAPI.identity.appAppleId)
                    }
                    let groups = try #require(body["data"] as? [[String: Any]])
                    let entries = groups.flatMap { ($0["lastTransactions"] as? [[String: Any]]) ?? [] }
                    #expect(entries.count == family.subscriptions.count)
                    let entry = try #require(
                        entries.first {
                            $0["originalTransactionId"] as? String == String(plan.originalTransactionId)
                        }
                    )
                    let status = try #require(entry["status"] as? Int)
                    let txn = try await client.verifier.verify(try #require(entry["signedTransactionInfo"] as? String))
                    let renewal = try await client.verifier.verify(try #require(entry["signedRenewalInfo"] as? String))
                    #expect(renewal["originalTransactionId"] as? String == String(plan.originalTransactionId))
                    #expect(txn["bundleId"] as? String == family.bundleId)
                    #expect(txn["price"] is NSNumber && txn["currency"] is String && txn["storefront"] is String)
                    if truth.expect == .decision {
                        #expect(
                            stateOfStatus[status] == truth.state,
                            "\(family.scenario) \(plan.originalTransactionId)"
                        )
                        #expect((renewal["autoRenewStatus"] as? Int == 1) == truth.autoRenew)
                        #expect(renewal["autoRenewProductId"] as? String == truth.autoRenewProductId)
                        #expect(
                            (renewal["gracePeriodExpiresDate"] as? NSNumber)?.int64Value
                                == truth.gracePeriodExpiresAt
                        )
                        if status != 5 {
                            #expect(
                                (txn["expiresDate"] as? NSNumber)?.int64Value == truth.expiresAt,
                                "\(family.scenario)"
                            )
                            #expect(txn["productId"] as? String == truth.productId)
                        }
                    }
                    // Transaction info: every transaction the timeline has, and not one more.
                    let timeline = plan.timeline(at: Self.now).transactions
                    for t in timeline {
                        let info = try await client.get(base + "/inApps/v1/transactions/\(t.transactionId)")
                        let jws = try #require(info.json?["signedTransactionInfo"] as? String)
                        let payload = try await client.verifier.verify(jws)
                        #expect(payload["transactionId"] as? String == String(t.transactionId))
                        #expect((payload["expiresDate"] as? NSNumber)?.int64Value == t.expires)
                        #expect(
                            (payload["revocationDate"] as? NSNumber)?.int64Value
                                == (t.isRefunded ? t.cancellation : nil)
                        )
                        #expect((payload["isUpgraded"] as? Bool ?? false) == t.isUpgraded)
                    }
                    let beyond = plan.originalTransactionId + UInt64(timeline.count)
                    #expect(
                        try await client.get(base + "/inApps/v1/transactions/\(beyond)").json?["errorCode"] as? Int
                            == 4_040_010
                    )
                    checked += 1
                }
            }
            #expect(checked > 250)
        }
    }

    @Test func statusFilterKeepsOnlyTheAskedStatuses() async throws {
        try await withSimulator(subscriptions: 200, configure: { $0.serverAPILimits = .unlimited }) { server in
            let client = try await ServerAPIClient.connect(to: server)
            defer { Task { await client.close() } }
            let family = try #require(server.population.families.first { $0.scenario == .multiGroup })
            let path = "/inApps/v1/subscriptions/\(family.primaryOriginalTransactionId)"
            let all = try #require(try await client.get(path).json?["data"] as? [[String: Any]])
            #expect(all.count == 2)
            let statuses = all.flatMap { ($0["lastTransactions"] as? [[String: Any]]) ?? [] }
                .compactMap { $0["status"] as? Int }
            let one = try #require(statuses.first)
            let filtered = try #require(try await client.get(path + "?status=\(one)").json?["data"] as? [[String: Any]])
            let kept = filtered.flatMap { ($0["lastTransactions"] as? [[String: Any]]) ?? [] }
            #expect(!kept.isEmpty && kept.allSatisfy { $0["status"] as? Int == one })
            #expect(kept.count == statuses.filter { $0 == one }.count)
            let bad = try await client.get(path + "?status=9")
            #expect(bad.status == 400 && bad.json?["errorCode"] as? Int == 4_000_031)
        }
    }
}
