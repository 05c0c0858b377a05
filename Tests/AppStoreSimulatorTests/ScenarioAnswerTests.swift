import Foundation
import Testing

@testable import AppStoreSimulator

/// The answers of the scenarios added for the corrected rules (upgrade without a cancellation date, refund
/// then resubscribe, a stored expiry later than Apple's, 21010 on an active row, out-of-bounds values, one
/// 21004), and the switch that answers 21004 to everything.
@Suite struct ScenarioAnswerTests {
    static let now = PopulationTests.now

    /// Verifies the stored receipt of every family of `scenario` (at most `limit`); returns (family, answer).
    private func answers(
        _ server: SimulatorServer,
        _ scenario: Scenario,
        limit: Int = 4,
        excludeOld: Bool? = nil
    ) async throws -> [(ReceiptFamily, TestResponse)] {
        var result: [(ReceiptFamily, TestResponse)] = []
        for family in server.population.families where family.scenario == scenario {
            let receipt = server.service.renderer.storedReceipt(family)
            let response = try await TestConnection.once(
                port: server.port,
                .POST,
                server.path(for: family),
                body: verifyBody(receipt: receipt, excludeOld: excludeOld)
            )
            result.append((family, response))
            if result.count == limit { break }
        }
        try #require(!result.isEmpty, "no \(scenario) family in the population")
        return result
    }

    private func transactions(_ response: TestResponse, otid: UInt64) throws -> [[String: Any]] {
        let json = try #require(response.json)
        #expect(json["status"] as? Int == 0)
        let infos = try #require(json["latest_receipt_info"] as? [[String: Any]])
        return infos.filter { $0["original_transaction_id"] as? String == String(otid) }
            .sorted { ($0["purchase_date_ms"] as? String ?? "") < ($1["purchase_date_ms"] as? String ?? "") }
    }

    @Test func upgradeWithoutCancellationMarksTheYearlyUpgradedWithoutACancellationDate() async throws {
        try await withSimulator(subscriptions: 600) { server in
            for (family, response) in try await answers(server, .upgradeWithoutCancellation) {
                let otid = family.subscriptions[0].originalTransactionId
                let txns = try transactions(response, otid: otid)
                let replaced = txns.filter { $0["is_upgraded"] as? String == "true" }
                try #require(replaced.count == 1)
                #expect((replaced[0]["product_id"] as? String)?.hasSuffix(".pro.yearly") == true)
                let cancellation = ["cancellation_date", "cancellation_date_ms", "cancellation_date_pst"]
                for key in cancellation + ["cancellation_reason"] {
                    #expect(replaced[0][key] == nil, "\(key) on the replaced transaction")
                }
                #expect(txns.allSatisfy { $0["cancellation_date_ms"] == nil })
                // The plus monthlies bought at and after the upgrade (an earlier yearly period may precede it).
                let upgradedAt = Int64(replaced[0]["purchase_date_ms"] as? String ?? "") ?? 0
                let after = txns.filter {
                    $0["is_upgraded"] == nil && (Int64($0["purchase_date_ms"] as? String ?? "") ?? 0) > upgradedAt
                }
                #expect(!after.isEmpty)
                #expect(after.allSatisfy { ($0["product_id"] as? String)?.hasSuffix(".plus.monthly") == true })
                // The replaced yearly expires after every plus monthly: a client keeping it extends the row.
                let yearlyExpiry = Int64(replaced[0]["expires_date_ms"] as? String ?? "") ?? 0
                let truth = TruthRecord(family: family, plan: family.subscriptions[0], at: Self.now)
                #expect(yearlyExpiry > (truth.expiresAt ?? .max))
                #expect(after.last?["expires_date_ms"] as? String == truth.expiresAt.map { String($0) })
            }
        }
    }

    @Test func refundThenResubscribeAnswersTheRefundedYearlyAndAPaidMonthly() async throws {
        try await withSimulator(subscriptions: 600) { server in
            for scenario in [Scenario.refundThenResubscribe, .refundThenResubscribeRevokedRow] {
                for (family, response) in try await answers(server, scenario) {
                    let otid = family.subscriptions[0].originalTransactionId
                    let txns = try transactions(response, otid: otid)
                    let refunded = txns.filter { $0["cancellation_date_ms"] != nil }
                    try #require(refunded.count == 1)
                    #expect((refunded[0]["product_id"] as? String)?.hasSuffix(".pro.yearly") == true)
                    #expect(["0", "1"].contains(refunded[0]["cancellation_reason"] as? String ?? ""))
                    #expect(refunded[0]["is_upgraded"] == nil)
                    let refundAt = Int64(refunded[0]["cancellation_date_ms"] as? String ?? "") ?? .max
                    let monthly = txns.filter { ($0["product_id"] as? String)?.hasSuffix(".pro.monthly") == true }
                    #expect(!monthly.isEmpty)
                    #expect(monthly.allSatisfy { (Int64($0["purchase_date_ms"] as? String ?? "") ?? 0) > refundAt })
                    let current = try #require(monthly.last)
                    #expect((Int64(current["expires_date_ms"] as? String ?? "") ?? 0) > Self.now)
                    #expect(
                        Int64(refunded[0]["expires_date_ms"] as? String ?? "") ?? 0
                            > Int64(current["expires_date_ms"] as? String ?? "") ?? .max
                    )
                    let renewal = try #require((response.json?["pending_renewal_info"] as? [[String: Any]])?.first)
                    #expect(renewal["auto_renew_status"] as? String == "1")
                    #expect((renewal["auto_renew_product_id"] as? String)?.hasSuffix(".pro.monthly") == true)
                    let truth = TruthRecord(family: family, plan: family.subscriptions[0], at: Self.now)
                    #expect(truth.state == "active")
                    #expect(truth.expiresAt.map { String($0) } == current["expires_date_ms"] as? String)
                }
            }
        }
    }

    @Test func implausibleValuesAreOnTheNewestTransactionWithOrWithoutOldTransactions() async throws {
        try await withSimulator(subscriptions: 1200) { server in
            var fields: Set<String> = []
            for scenario in [Scenario.absurdDate, .nearInt64Max, .nulInText] {
                for excludeOld in [false, true] {
                    for (family, response) in try await answers(server, scenario, limit: 8, excludeOld: excludeOld) {
                        let bad = try #require(family.implausibleValue)
                        fields.insert(bad.key)
                        let raw = String(decoding: response.body, as: UTF8.self)
                        switch (scenario, bad) {
                        case (.absurdDate, .date("expires_date", let ms)):
                            #expect(ms == 9_000_000_000_000_000)
                            #expect(raw.contains("\"expires_date_ms\":\"9000000000000000\""))
                        case (.nearInt64Max, .date(let field, let ms)):
                            #expect(ms == 9_223_372_036_854_775_000)
                            #expect(raw.contains("\"\(field)_ms\":\"9223372036854775000\""))
                        case (.nulInText, .text(let field, let value)):
                            #expect(value.utf8.contains(0))
                            // A JSON escape, as Apple's serializer would write it; the rest of the body is valid.
                            #expect(raw.contains("\"\(field)\":\"") && raw.contains("\\u0000"))
                        default:
                            Issue.record("\(scenario) carries \(bad)")
                        }
                        let otid = family.subscriptions[0].originalTransactionId
                        let txns = try transactions(response, otid: otid)
                        let newest = try #require(txns.last)
                        #expect(newest[bad.key] as? String == ResponseShapeTests.value(bad))
                        #expect(txns.dropLast().allSatisfy { $0[bad.key] as? String != ResponseShapeTests.value(bad) })
                        // The string forms keep the real date: only the `_ms` value is out of bounds.
                        if case .date(let field, _) = bad {
                            let real = try #require(newest[field] as? String)
                            #expect(real.hasPrefix("20") && real.hasSuffix(" Etc/GMT"))
                        }
                    }
                }
            }
            #expect(fields.contains("expires_date_ms") && fields.count >= 3, "fields: \(fields)")
        }
    }

    @Test func oneReceiptAnswers21004WhileTheOthersAnswerNormally() async throws {
        try await withSimulator(subscriptions: 600) { server in
            for (_, response) in try await answers(server, .foreignSecretReceipt) {
                #expect(response.json?["status"] as? Int == 21004)
            }
            for (_, response) in try await answers(server, .silentRenewal) {
                #expect(response.json?["status"] as? Int == 0)
            }
            for scenario in [Scenario.deletedAccount, .deletedAccountActive] {
                for (family, response) in try await answers(server, scenario) {
                    #expect(response.json?["status"] as? Int == 21010)
                    let truth = TruthRecord(family: family, plan: family.subscriptions[0], at: Self.now)
                    if scenario == .deletedAccountActive { #expect(truth.storedExpiresAt > Self.now) }
                    #expect(truth.expect == .entitlementEnded && truth.expiresAt == truth.storedExpiresAt)
                }
            }
        }
    }

    @Test func secretMismatchForAllAnswers21004ToEveryWellFormedRequest() async throws {
        try await withSimulator(subscriptions: 120, configure: { $0.secretMismatchForAll = true }) { server in
            let conn = try await TestConnection.connect(port: server.port)
            for family in server.population.families {
                let receipt = server.service.renderer.storedReceipt(family)
                for path in ["/verifyReceipt", "/sandbox/verifyReceipt"] {
                    let response = try await conn.send(.POST, path, body: verifyBody(receipt: receipt))
                    #expect(response.json?["status"] as? Int == 21004, "\(family.scenario) on \(path)")
                }
            }
            // Not a verifyReceipt request at all: still 21000.
            let notJSON = try await conn.send(.POST, "/verifyReceipt", body: Array("hello".utf8))
            #expect(notJSON.json?["status"] as? Int == 21000)
            await conn.close()
        }
    }

    @Test func answersAreTheSameForTheSameSeedAndDifferForAnother() {
        let scenarios: Set<Scenario> = [
            .upgradeWithoutCancellation, .refundThenResubscribe, .refundThenResubscribeRevokedRow,
            .appStoredLaterExpiry, .absurdDate, .nearInt64Max, .nulInText,
        ]
        func rendered(_ seed: UInt64) -> [[UInt8]] {
            let pop = Population(seed: seed, subscriptions: 400, anchor: Self.now)
            let renderer = ResponseRenderer(population: pop)
            return pop.families.filter { scenarios.contains($0.scenario) }.map { family in
                let token = ReceiptToken(
                    familyIndex: UInt32(family.index),
                    originalTransactionId: family.primaryOriginalTransactionId,
                    sandbox: family.sandbox,
                    createdAt: family.storedReceiptAt,
                    issueSequence: 1
                )
                return renderer.renderSuccess(family: family, token: token, now: Self.now, excludeOld: false)
                    + TruthRecord(family: family, plan: family.subscriptions[0], at: Self.now).jsonLine()
            }
        }
        let a = rendered(31)
        #expect(a.count >= scenarios.count)
        #expect(a == rendered(31))
        #expect(a != rendered(32))
    }
}
