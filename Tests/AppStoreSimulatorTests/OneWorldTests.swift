import Foundation
import Testing

@testable import AppStoreSimulator

/// One world, two APIs, one truth: for every subscription of a 5,000-subscription population the Server API
/// agrees with `truth.jsonl`, and its transactions and renewal info agree with the verifyReceipt answer.
@Suite struct OneWorldTests {
    static let now = PopulationTests.now

    static func ms(_ value: Any?) -> Int64? {
        if let n = value as? NSNumber { return n.int64Value }
        if let s = value as? String { return Int64(s) }
        return nil
    }

    @Test func serverAPIAgreesWithTruthAndVerifyReceiptForEverySubscription() async throws {
        try await withSimulator(seed: 5, subscriptions: 5000, configure: { $0.serverAPILimits = .unlimited }) {
            server in
            let client = try await ServerAPIClient.connect(to: server)
            let stateOfStatus = [1: "active", 2: "expired", 3: "billing_retry", 4: "grace_period", 5: "revoked"]
            var decisions = 0
            var agreedWithTruth = 0
            var comparedWithVerifyReceipt = 0
            for family in server.population.families {
                let served = family.bundleId == server.population.bundleId && family.fixedStatus != 21010
                let base = ServerAPIClient.base(sandbox: family.sandbox)
                // The verifyReceipt side, when Apple answers it with status 0.
                let receipt = server.service.renderer.storedReceipt(family)
                let verify = try await client.connection.send(
                    .POST,
                    server.path(for: family),
                    body: verifyBody(receipt: receipt, excludeOld: false)
                )
                let verifyJSON = verify.json
                let comparable = verifyJSON?["status"] as? Int == 0 && family.implausibleValue == nil && served
                let latest = (verifyJSON?["latest_receipt_info"] as? [[String: Any]]) ?? []
                let pending = (verifyJSON?["pending_renewal_info"] as? [[String: Any]]) ?? []
                // The Server API side: the customer's whole history.
                var history: [String: [String: Any]] = [:]
                if served {
                    let (payloads, _) = try await ServerAPIHistoryTests.pageAll(
                        client,
                        base + "/inApps/v2/history/\(family.primaryOriginalTransactionId)"
                    )
                    for p in payloads { history[p["transactionId"] as? String ?? ""] = p }
                }
                for plan in family.subscriptions {
                    let truth = TruthRecord(family: family, plan: plan, at: Self.now)
                    let r = try await client.get(base + "/inApps/v1/subscriptions/\(plan.originalTransactionId)")
                    guard served else {
                        #expect(r.json?["errorCode"] as? Int == 4_040_010)
                        continue
                    }
                    let entries = ((r.json?["data"] as? [[String: Any]]) ?? [])
                        .flatMap { ($0["lastTransactions"] as? [[String: Any]]) ?? [] }
                    let entry = try #require(
                        entries.first {
                            $0["originalTransactionId"] as? String == String(plan.originalTransactionId)
                        }
                    )
                    let txn = try await client.verifier.verify(try #require(entry["signedTransactionInfo"] as? String))
                    let renewal = try await client.verifier.verify(try #require(entry["signedRenewalInfo"] as? String))
                    if truth.expect == .decision {
                        decisions += 1
                        let status = entry["status"] as? Int ?? 0
                        var agrees =
                            stateOfStatus[status] == truth.state
                            && (renewal["autoRenewStatus"] as? Int == 1) == truth.autoRenew
                            && renewal["autoRenewProductId"] as? String == truth.autoRenewProductId
                            && Self.ms(renewal["gracePeriodExpiresDate"]) == truth.gracePeriodExpiresAt
                            && history.values.filter {
                                $0["originalTransactionId"] as? String == String(plan.originalTransactionId)
                            }.count == truth.transactionCount
                        if status != 5 {
                            agrees =
                                agrees && Self.ms(txn["expiresDate"]) == truth.expiresAt
                                && txn["productId"] as? String == truth.productId
                        }
                        #expect(agrees, "\(family.scenario) \(plan.originalTransactionId)")
                        if agrees { agreedWithTruth += 1 }
                    }
                    guard comparable else { continue }
                    comparedWithVerifyReceipt += 1
                    // Same transactions, expiries, refunds and upgrades as latest_receipt_info.
                    let mine = latest.filter {
                        $0["original_transaction_id"] as? String == String(plan.originalTransactionId)
                    }
                    let apiMine = history.values.filter {
                        $0["originalTransactionId"] as? String == String(plan.originalTransactionId)
                    }
                    #expect(mine.count == apiMine.count, "\(family.scenario)")
                    for v in mine {
                        let id = v["transaction_id"] as? String ?? ""
                        let a = try #require(history[id], "\(family.scenario) \(id)")
                        #expect(Self.ms(a["expiresDate"]) == Self.ms(v["expires_date_ms"]))
                        #expect(Self.ms(a["purchaseDate"]) == Self.ms(v["purchase_date_ms"]))
                        #expect(a["productId"] as? String == v["product_id"] as? String)
                        let upgraded = v["is_upgraded"] as? String == "true"
                        #expect((a["isUpgraded"] as? Bool ?? false) == upgraded)
                        if !upgraded {
                            #expect(Self.ms(a["revocationDate"]) == Self.ms(v["cancellation_date_ms"]))
                        }
                    }
                    // Same renewal info as pending_renewal_info.
                    let p = try #require(
                        pending.first {
                            $0["original_transaction_id"] as? String == String(plan.originalTransactionId)
                        }
                    )
                    #expect((renewal["autoRenewStatus"] as? Int).map(String.init) == p["auto_renew_status"] as? String)
                    #expect(renewal["autoRenewProductId"] as? String == p["auto_renew_product_id"] as? String)
                    #expect(Self.ms(renewal["gracePeriodExpiresDate"]) == Self.ms(p["grace_period_expires_date_ms"]))
                }
            }
            #expect(decisions > 4000 && agreedWithTruth == decisions)
            #expect(comparedWithVerifyReceipt > 4000)
            await client.close()
        }
    }
}
