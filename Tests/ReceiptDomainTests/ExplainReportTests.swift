import Foundation
import Testing

@testable import ReceiptDomain

/// The `explain` core: exact keys in order, values, and errors that name the file.
@Suite struct ExplainReportTests {
    static let expectedKeys = [
        "apple_status", "environment", "verdict", "retryable", "reason", "original_transaction_id", "state",
        "expires_at", "product_id", "latest_transaction_id", "auto_renew", "auto_renew_product_id",
        "expiration_intent", "grace_period_expires_at", "in_billing_retry", "is_trial", "is_intro_offer",
        "revoked_at", "cancellation_reason", "app_account_token", "app_transaction_id", "price_increase_status",
        "renewal_price_milliunits", "renewal_currency", "renewal_billing_plan_type",
    ]
    let now = Date(timeIntervalSince1970: 1_717_200_000)

    func explain(
        _ file: String,
        otid: String? = nil,
        bundle: String? = "com.example.reader",
        environment: AppleEnvironment? = .production
    ) throws -> ExplainReport {
        try ExplainReport.build(
            body: try Scenario.fixtureBytes(file),
            sourceName: file,
            originalTransactionId: otid,
            bundleId: bundle,
            now: now,
            environment: environment
        )
    }

    func explainError(_ body: String, source: String = "resp.json") -> ExplainError? {
        do {
            _ = try ExplainReport.build(
                body: Array(body.utf8),
                sourceName: source,
                originalTransactionId: nil,
                bundleId: nil,
                now: now,
                environment: nil
            )
            return nil
        } catch {
            return error
        }
    }

    /// Keys in the order they appear in the text (each member is on its own line in pretty output).
    static func keyOrder(_ json: String) -> [String] {
        json.split(separator: "\n").compactMap { line in
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("\""), let end = trimmed.dropFirst().firstIndex(of: "\"") else { return nil }
            return String(trimmed[trimmed.index(after: trimmed.startIndex)..<end])
        }
    }

    static func decode(_ json: String) throws -> SidecarJSON {
        try JSONDecoder().decode(SidecarJSON.self, from: Data(json.utf8))
    }

    @Test func keysAreExactlyTheListInOrder() throws {
        #expect(ExplainReport.keys == Self.expectedKeys)
        for file in ["status_0_active_renewed.json", "status_21005_server_unavailable.json", "bundle_mismatch.json"] {
            let report = try explain(file, otid: "1000000811111111")
            let json = report.jsonString()
            #expect(Self.keyOrder(json) == Self.expectedKeys, "\(file)")
            let parsed = try Self.decode(json)
            #expect(parsed.keys == Self.expectedKeys.sorted(), "\(file)")
            // Compact output has the same order.
            let compact = report.jsonString(pretty: false)
            let positions = Self.expectedKeys.compactMap { compact.range(of: "\"\($0)\":")?.lowerBound }
            #expect(positions.count == Self.expectedKeys.count && positions == positions.sorted())
            #expect(try Self.decode(compact) == parsed)
        }
    }

    @Test func singleSubscriptionIsExplainedWithoutAnId() throws {
        let parsed = try Self.decode(try explain("status_0_active_renewed.json").jsonString())
        #expect(parsed["apple_status"] == .int(0))
        #expect(parsed["environment"] == .string("Production"))
        #expect(parsed["verdict"] == .string("ok"))
        #expect(parsed["retryable"] == .bool(false))
        #expect(parsed["reason"] == .null)
        #expect(parsed["original_transaction_id"] == .string("1000000811111111"))
        #expect(parsed["state"] == .string("active"))
        #expect(parsed["expires_at"] == .string("2024-06-26T00:00:00Z"))
        #expect(parsed["product_id"] == .string("com.example.reader.monthly"))
        #expect(parsed["latest_transaction_id"] == .string("1000000811111203"))
        #expect(parsed["auto_renew"] == .bool(true))
        #expect(parsed["auto_renew_product_id"] == .string("com.example.reader.monthly"))
        #expect(parsed["expiration_intent"] == .null)
        #expect(parsed["grace_period_expires_at"] == .null)
        #expect(parsed["in_billing_retry"] == .bool(false))
        #expect(parsed["is_trial"] == .bool(false))
        #expect(parsed["is_intro_offer"] == .bool(false))
        #expect(parsed["revoked_at"] == .null)
        #expect(parsed["cancellation_reason"] == .null)
    }

    @Test func revokedAndGraceValues() throws {
        let revoked = try Self.decode(try explain("refund_of_current_period_revokes.json").jsonString())
        #expect(revoked["state"] == .string("revoked"))
        #expect(revoked["revoked_at"] == .string("2024-05-30T00:00:00Z"))
        #expect(revoked["cancellation_reason"] == .int(1))
        #expect(revoked["expires_at"] == .string("2024-05-12T00:00:00Z"))
        let grace = try Self.decode(try explain("grace_period.json").jsonString())
        #expect(grace["state"] == .string("grace_period"))
        #expect(grace["grace_period_expires_at"] == .string("2024-06-05T00:00:00Z"))
        #expect(grace["in_billing_retry"] == .bool(true))
        #expect(grace["expiration_intent"] == .int(2))
    }

    @Test func nonZeroMillisecondsAreShown() throws {
        let body = #"""
            {"status": 0, "receipt": {"bundle_id": "b"}, "latest_receipt_info": [{"transaction_id": "9",
             "original_transaction_id": "9", "product_id": "p", "expires_date_ms": "1717286400250"}]}
            """#
        let report = try ExplainReport.build(
            body: Array(body.utf8),
            sourceName: "ms.json",
            originalTransactionId: nil,
            bundleId: "b",
            now: now,
            environment: nil
        )
        let parsed = try Self.decode(report.jsonString())
        #expect(parsed["expires_at"] == .string("2024-06-02T00:00:00.250Z"))
        #expect(parsed["environment"] == .null)
        #expect(parsed["auto_renew"] == .null)
    }

    @Test func nonOkStatusesHaveNoState() throws {
        let retry = try Self.decode(try explain("status_21005_server_unavailable.json").jsonString())
        #expect(retry["verdict"] == .string("retry"))
        #expect(retry["retryable"] == .bool(true))
        #expect(retry["reason"]?.string?.contains("21005") == true)
        #expect(retry["state"] == .null && retry["expires_at"] == .null && retry["in_billing_retry"] == .null)
        let switching = try Self.decode(try explain("status_21007_sandbox_receipt_in_production.json").jsonString())
        #expect(switching["verdict"] == .string("switch_environment"))
        #expect(switching["retryable"] == .bool(false))
        #expect(switching["reason"]?.string?.contains("21007") == true)
        let config = try Self.decode(try explain("status_21000_bad_request.json").jsonString())
        #expect(config["verdict"] == .string("config_error"))
        let secret = try Self.decode(try explain("status_21004_shared_secret_mismatch.json").jsonString())
        #expect(secret["verdict"] == .string("reject"))
        #expect(secret["reason"]?.string?.contains("21004") == true)
        let loop = try Self.decode(
            try explain("status_21007_from_sandbox_is_a_loop.json", environment: .sandbox).jsonString()
        )
        #expect(loop["verdict"] == .string("reject"))
        #expect(loop["environment"] == .string("Sandbox"))
    }

    @Test func foreignReceiptIsRejectedNotActive() throws {
        let parsed = try Self.decode(try explain("bundle_mismatch.json").jsonString())
        #expect(parsed["verdict"] == .string("reject"))
        #expect(parsed["state"] == .null)
        #expect(parsed["reason"]?.string?.contains("com.evil.clone") == true)
        let absent = try Self.decode(try explain("status_0_active_renewed.json", otid: "999").jsonString())
        #expect(absent["verdict"] == .string("reject"))
        #expect(absent["original_transaction_id"] == .string("999"))
        #expect(absent["reason"]?.string?.contains("not in the receipt") == true)
    }

    @Test func severalSubscriptionsAreListed() throws {
        do {
            _ = try explain("several_subscription_groups.json")
            Issue.record("expected an ambiguity error")
        } catch let error as ExplainError {
            #expect(error.code == .ambiguousSubscription)
            #expect(error.description.hasPrefix("several_subscription_groups.json: "))
            #expect(error.description.contains("1000000811111111 (com.example.reader.monthly)"))
            #expect(error.description.contains("2000000922222222 (com.example.reader.video.monthly)"))
            #expect(error.candidates.map(\.originalTransactionId) == ["1000000811111111", "2000000922222222"])
        }
        let chosen = try Self.decode(
            try explain("several_subscription_groups.json", otid: "2000000922222222").jsonString()
        )
        #expect(chosen["product_id"] == .string("com.example.reader.video.monthly"))
    }

    @Test func errorsNameTheFileAndTheProblem() {
        #expect(explainError(#"{"status": 0,, }"#)?.description.hasPrefix("resp.json: not JSON at byte 13") == true)
        #expect(
            explainError(#"{"error": "x"}"#)?.description
                == "resp.json: no `status` field: is this a verifyReceipt response?"
        )
        #expect(explainError("", source: "empty.json")?.description.hasPrefix("empty.json: not JSON at byte 0") == true)
        let wrongType = explainError(#"{"status": 0, "pending_renewal_info": {}}"#)
        #expect(wrongType?.description.hasPrefix("resp.json: field `pending_renewal_info`") == true)
        let none = explainError(#"{"status": 0, "receipt": {"in_app": []}}"#)
        #expect(none?.code == .noSubscription)
        #expect(none?.description.hasPrefix("resp.json: ") == true)
    }

    @Test func everyFixtureEitherExplainsOrFailsNamingTheFile() throws {
        for name in Scenario.allNames() {
            let scenario = try Scenario.load(name)
            guard let file = scenario.sidecar["body"]?.string, let body = scenario.body else { continue }
            do {
                let report = try ExplainReport.build(
                    body: body,
                    sourceName: file,
                    originalTransactionId: nil,
                    bundleId: "com.example.reader",
                    now: now,
                    environment: scenario.requestedEnvironment
                )
                #expect(Self.keyOrder(report.jsonString()) == Self.expectedKeys, "\(name)")
            } catch {
                #expect(error.description.hasPrefix(file + ": "), "\(name): \(error)")
            }
        }
    }
}
