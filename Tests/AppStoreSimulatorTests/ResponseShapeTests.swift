import Foundation
import Testing

@testable import AppStoreSimulator

/// Decides a subscription's state from a rendered status-0 response with the documented rules, to
/// check that what the simulator renders agrees with its own truth.
func stateFromResponse(_ json: [String: Any], otid: String, now: Int64) -> (state: String, expires: Int64)? {
    guard let infos = json["latest_receipt_info"] as? [[String: Any]] else { return nil }
    let txns = infos.filter { $0["original_transaction_id"] as? String == otid }
    func ms(_ t: [String: Any], _ k: String) -> Int64? { (t[k] as? String).flatMap { Int64($0) } }
    let upgraded = { (t: [String: Any]) in t["is_upgraded"] as? String == "true" }
    let refunded = { (t: [String: Any]) in t["cancellation_date_ms"] != nil && !upgraded(t) }
    let byExpiry = { (a: [String: Any], b: [String: Any]) in
        (ms(a, "expires_date_ms") ?? 0) < (ms(b, "expires_date_ms") ?? 0)
    }
    // Neither refunded nor replaced by an upgrade (with or without a cancellation date).
    let best = txns.filter { !refunded($0) && !upgraded($0) }.max(by: byExpiry)
    let bestExpiry = best.flatMap { ms($0, "expires_date_ms") }
    if let c = txns.filter(refunded).max(by: byExpiry), let refundExpiry = ms(c, "expires_date_ms"),
        bestExpiry.map({ refundExpiry > $0 && $0 <= now }) ?? true
    {
        let lastCancelled = txns.filter(refunded).compactMap { ms($0, "cancellation_date_ms") }.max() ?? 0
        return ("revoked", bestExpiry ?? lastCancelled)
    }
    guard let best, let expires = ms(best, "expires_date_ms") else { return nil }
    let renewal = (json["pending_renewal_info"] as? [[String: Any]])?
        .first { $0["original_transaction_id"] as? String == otid }
    if expires > now { return ("active", expires) }
    if let g = renewal.flatMap({ ms($0, "grace_period_expires_date_ms") }), now < g { return ("grace_period", expires) }
    if renewal?["is_in_billing_retry_period"] as? String == "1" { return ("billing_retry", expires) }
    return ("expired", expires)
}

/// Every value below the top level must be a string (Apple sends only `status` and `is_retryable` otherwise).
func nonStringFields(_ value: Any, path: String = "") -> [String] {
    if let d = value as? [String: Any] {
        return d.flatMap { nonStringFields($0.value, path: path + "." + $0.key) }
    }
    if let a = value as? [Any] {
        return a.enumerated().flatMap { nonStringFields($0.element, path: path + "[\($0.offset)]") }
    }
    return value is String ? [] : [path]
}

@Suite struct ResponseShapeTests {
    /// The string an `ImplausibleValue` puts into the answer.
    static func value(_ bad: ImplausibleValue) -> String {
        switch bad {
        case .date(_, let ms): return String(ms)
        case .text(_, let text): return text
        }
    }

    @Test func everyScenarioAnswersLikeAppleAndAgreesWithTruth() async throws {
        try await withSimulator { server in
            let now = PopulationTests.now
            let conn = try await TestConnection.connect(port: server.port)
            var checkedScenarios: Set<Scenario> = []
            var sawUnsorted = false
            for family in server.population.families {
                let receipt = server.service.renderer.storedReceipt(family)
                let resp = try await conn.send(.POST, server.path(for: family), body: verifyBody(receipt: receipt))
                #expect(resp.status == 200)
                let json = try #require(resp.json, "family \(family.index) body is not JSON")
                let status = try #require(json["status"] as? Int, "status must be a JSON number")
                let plan = family.subscriptions[0]
                let truth = TruthRecord(family: family, plan: plan, at: now)
                #expect(status == truth.appleStatus, "\(family.scenario) status \(status)")
                checkedScenarios.insert(family.scenario)
                if let bad = family.implausibleValue {
                    // Apple's otherwise correct answer carries the value on the newest transaction: refused.
                    #expect(status == 0 && truth.expect == .rejected)
                    let target = try #require(plan.timeline(at: now).transactions.max { $0.purchase < $1.purchase })
                    let infos = try #require(json["latest_receipt_info"] as? [[String: Any]])
                    let carrier = try #require(
                        infos.first { $0["transaction_id"] as? String == String(target.transactionId) }
                    )
                    #expect(
                        Self.value(bad) == carrier[bad.key] as? String,
                        "\(family.scenario): \(carrier[bad.key] ?? "absent")"
                    )
                    #expect(infos.filter { Self.value(bad) == $0[bad.key] as? String }.count == 1)
                    continue
                }
                guard status == 0 else {
                    #expect(json.count <= 2)
                    continue
                }
                // Shape: everything is a string below the top level; three date forms.
                for key in ["receipt", "latest_receipt_info", "pending_renewal_info"] {
                    let value = try #require(json[key], "missing \(key)")
                    #expect(nonStringFields(value).isEmpty, "\(family.scenario): non-string \(nonStringFields(value))")
                }
                #expect(json["environment"] as? String == (family.sandbox ? "Sandbox" : "Production"))
                let receiptObj = try #require(json["receipt"] as? [String: Any])
                #expect(receiptObj["bundle_id"] as? String == family.bundleId)
                let infos = try #require(json["latest_receipt_info"] as? [[String: Any]])
                let inApp = try #require(receiptObj["in_app"] as? [[String: Any]])
                #expect(inApp.count <= infos.count)
                for t in infos + inApp {
                    for d in ["purchase_date", "original_purchase_date", "expires_date"] {
                        let msValue = try #require((t[d + "_ms"] as? String).flatMap { Int64($0) })
                        #expect(t[d] as? String == SimTime.gmtString(msValue))
                        #expect(t[d + "_pst"] as? String == SimTime.pacificString(msValue))
                    }
                    #expect(t["subscription_group_identifier"] is String && t["web_order_line_item_id"] is String)
                    #expect(["PURCHASED", "FAMILY_SHARED"].contains(t["in_app_ownership_type"] as? String ?? ""))
                    if t["cancellation_date_ms"] != nil, t["is_upgraded"] == nil {
                        #expect(["0", "1"].contains(t["cancellation_reason"] as? String ?? ""))
                    }
                }
                let purchases = infos.compactMap { ($0["purchase_date_ms"] as? String).flatMap { Int64($0) } }
                if purchases != purchases.sorted() && purchases != purchases.sorted(by: >) { sawUnsorted = true }
                // The newest receipt is longer than the one sent, and accepted the next night.
                let latest = try #require(json["latest_receipt"] as? String)
                #expect(latest.utf8.count > receipt.utf8.count)
                #expect(family.transactionCount(at: now) == infos.count)
                // Truth from the model agrees with the rules applied to the rendered JSON.
                for plan in family.subscriptions {
                    let t = TruthRecord(family: family, plan: plan, at: now)
                    guard t.expect == .decision else { continue }
                    let decided = try #require(
                        stateFromResponse(json, otid: String(plan.originalTransactionId), now: now)
                    )
                    #expect(
                        decided.state == t.state,
                        "\(family.scenario): json says \(decided.state), truth \(t.state ?? "nil")"
                    )
                    #expect(decided.expires == t.expiresAt)
                }
                let renewals = try #require(json["pending_renewal_info"] as? [[String: Any]])
                #expect(renewals.count == family.subscriptions.count)
                if family.subscriptions.count == 2 {
                    var firstSeen: [String] = []
                    for t in infos {
                        if let o = t["original_transaction_id"] as? String, !firstSeen.contains(o) {
                            firstSeen.append(o)
                        }
                    }
                    #expect(renewals.compactMap { $0["original_transaction_id"] as? String } != firstSeen)
                }
            }
            #expect(checkedScenarios == Set(Scenario.allCases))
            #expect(sawUnsorted, "latest_receipt_info always came sorted")
            await conn.close()
        }
    }

    @Test func environmentsSecretAndExcludeOld() async throws {
        try await withSimulator { server in
            let (prod, prodReceipt) = try #require(server.storedReceipt(.silentRenewal))
            let (_, sandboxReceipt) = try #require(server.storedReceipt(.sandbox))
            let port = server.port
            let r21007 = try await TestConnection.once(
                port: port,
                .POST,
                "/verifyReceipt",
                body: verifyBody(receipt: sandboxReceipt)
            )
            #expect(r21007.json?["status"] as? Int == 21007)
            let r21008 = try await TestConnection.once(
                port: port,
                .POST,
                "/sandbox/verifyReceipt",
                body: verifyBody(receipt: prodReceipt)
            )
            #expect(r21008.json?["status"] as? Int == 21008)
            let wrong = try await TestConnection.once(
                port: port,
                .POST,
                "/verifyReceipt",
                body: verifyBody(receipt: prodReceipt, password: "nope")
            )
            #expect(wrong.json?["status"] as? Int == 21004)
            let missing = try await TestConnection.once(
                port: port,
                .POST,
                "/verifyReceipt",
                body: verifyBody(receipt: prodReceipt, password: nil)
            )
            #expect(missing.json?["status"] as? Int == 21004)
            let empty = try await TestConnection.once(
                port: port,
                .POST,
                "/verifyReceipt",
                body: verifyBody(receipt: "")
            )
            #expect(empty.json?["status"] as? Int == 21002)
            let notJSON = try await TestConnection.once(port: port, .POST, "/verifyReceipt", body: Array("hello".utf8))
            #expect(notJSON.json?["status"] as? Int == 21000)
            let get = try await TestConnection.once(port: port, .GET, "/verifyReceipt")
            #expect(get.json?["status"] as? Int == 21000)
            var tamperedBytes = Array(prodReceipt.utf8)
            tamperedBytes[200] = tamperedBytes[200] == 65 ? 66 : 65
            let tampered = try await TestConnection.once(
                port: port,
                .POST,
                "/verifyReceipt",
                body: verifyBody(receipt: String(decoding: tamperedBytes, as: UTF8.self))
            )
            #expect(tampered.json?["status"] as? Int == 21003)

            let all = try await TestConnection.once(
                port: port,
                .POST,
                "/verifyReceipt",
                body: verifyBody(receipt: prodReceipt)
            )
            let latestOnly = try await TestConnection.once(
                port: port,
                .POST,
                "/verifyReceipt",
                body: verifyBody(receipt: prodReceipt, excludeOld: true)
            )
            let allInfos = try #require(all.json?["latest_receipt_info"] as? [[String: Any]])
            let oneInfo = try #require(latestOnly.json?["latest_receipt_info"] as? [[String: Any]])
            #expect(allInfos.count > 1 && oneInfo.count == prod.subscriptions.count)
            let newest = allInfos.compactMap { ($0["purchase_date_ms"] as? String).flatMap { Int64($0) } }.max()
            #expect(oneInfo.first?["purchase_date_ms"] as? String == newest.map { String($0) })

            // The receipt Apple returned is accepted next time and grows again.
            let next = try #require(all.json?["latest_receipt"] as? String)
            let again = try await TestConnection.once(
                port: port,
                .POST,
                "/verifyReceipt",
                body: verifyBody(receipt: next)
            )
            #expect(again.json?["status"] as? Int == 0)
            #expect(((again.json?["latest_receipt"] as? String)?.utf8.count ?? 0) > next.utf8.count)

            let health = try await TestConnection.once(port: port, .GET, "/_health")
            #expect(health.status == 200)
        }
    }

    @Test func keepAliveServesManyRequestsOnOneConnection() async throws {
        try await withSimulator { server in
            let (_, receipt) = try #require(server.storedReceipt(.activeNotRenewed))
            let conn = try await TestConnection.connect(port: server.port)
            for _ in 0..<20 {
                let r = try await conn.send(.POST, "/verifyReceipt", body: verifyBody(receipt: receipt))
                #expect(r.json?["status"] as? Int == 0)
            }
            await conn.close()
            let stats = try await TestConnection.once(port: server.port, .GET, "/_stats")
            let json = try #require(stats.json)
            #expect(json["requests_total"] as? Int == 20)
            #expect((json["connections_accepted"] as? Int ?? 0) >= 2)
            let paths = try #require(json["paths"] as? [String: Any])
            let verify = try #require(paths["/verifyReceipt"] as? [String: Any])
            #expect((verify["apple_status"] as? [String: Any])?["0"] as? Int == 20)
        }
    }
}
