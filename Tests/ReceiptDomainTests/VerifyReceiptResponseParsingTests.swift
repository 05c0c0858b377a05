import Foundation
import Testing

@testable import ReceiptDomain

/// Unit tests of the tolerant parser: spellings, syntax errors with byte offsets, hostile input.
@Suite struct VerifyReceiptResponseParsingTests {
    func parse(_ text: String) throws(ReceiptParseError) -> VerifyReceiptResponse {
        try VerifyReceiptResponse.parse(Array(text.utf8))
    }

    func parseError(_ text: String) -> ReceiptParseError? {
        do {
            _ = try parse(text)
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: [
        ("true", true), ("\"true\"", true), ("1", true), ("\"1\"", true), ("\"TRUE\"", true),
        ("false", false), ("\"false\"", false), ("0", false), ("\"0\"", false),
    ])
    func flagSpellings(_ literal: String, _ expected: Bool) throws {
        let response = try parse(#"{"status": 21100, "is_retryable": \#(literal)}"#)
        #expect(response.isRetryable == expected)
        let dashed = try parse(#"{"status": 21100, "is-retryable": \#(literal)}"#)
        #expect(dashed.isRetryable == expected)
    }

    @Test func statusSpellings() throws {
        #expect(try parse(#"{"status": 0}"#).status == 0)
        #expect(try parse(#"{"status": "21007"}"#).status == 21007)
        #expect(try parse(#"{"status": 21006.0}"#).status == 21006)
        #expect(try parse(#"{"status": " 21002 "}"#).status == 21002)
    }

    @Test func missingOrUnreadableStatus() {
        #expect(parseError(#"{"environment": "Production"}"#)?.code == .missingStatus)
        #expect(parseError(#"{"status": null}"#)?.code == .missingStatus)
        let wrong = parseError(#"{"status": "ok"}"#)
        #expect(wrong?.code == .invalidField)
        #expect(wrong?.field == "status")
        #expect(parseError(#"{"status": {"code": 0}}"#)?.field == "status")
        #expect(parseError(#"[1, 2]"#)?.code == .notAnObject)
        #expect(parseError(#""status""#)?.code == .notAnObject)
    }

    @Test func syntaxErrorsNameTheByte() {
        let cases: [(String, Int)] = [
            ("", 0), ("   ", 3), ("<html>", 0), (#"{"status": 0,, }"#, 13), (#"{"status": 0"#, 12),
            (#"{"status": 0} trailing"#, 14), (#"{"status": tru}"#, 11), (#"{"status": "abc"#, 11),
            (#"{"status": 01}"#, 12), (#"{"a": "\x"}"#, 7), (#"{"status": -}"#, 12),
        ]
        for (text, offset) in cases {
            let error = parseError(text)
            #expect(error?.code == .notJSON, "\(text)")
            #expect(error?.byteOffset == offset, "\(text): \(String(describing: error))")
            #expect(error?.description.hasPrefix("not JSON at byte \(offset)") == true, "\(text)")
        }
    }

    @Test func deepNestingFailsCleanly() {
        let deep = String(repeating: "[", count: 100_000)
        let error = parseError(deep)
        #expect(error?.code == .notJSON)
        #expect(error?.detail.contains("nesting") == true)
    }

    @Test func stringsDecodeEscapesAndUnicode() throws {
        let response = try parse(
            #"{"status": 0, "receipt": {"bundle_id": "com.ex\u0061mple.\ud83d\ude00.caf\u00e9\n\"q\"\/"}}"#
        )
        #expect(response.receipt?.bundleId == "com.example.😀.café\n\"q\"/")
        let raw = try parse("{\"status\": 0, \"receipt\": {\"bundle_id\": \"日本語\"}}")
        #expect(raw.receipt?.bundleId == "日本語")
    }

    @Test func acceptsByteOrderMarkDataAndSlices() throws {
        let text = #"{"status": 21005}"#
        let withBOM = [0xEF, 0xBB, 0xBF] + Array(text.utf8)
        #expect(try VerifyReceiptResponse.parse(withBOM).status == 21005)
        #expect(try VerifyReceiptResponse.parse(Data(text.utf8)).status == 21005)
        let padded = Array(("xx" + text + "yy").utf8)
        #expect(try VerifyReceiptResponse.parse(padded[2..<(padded.count - 2)]).status == 21005)
        // A non-contiguous collection goes through the copying path.
        #expect(try VerifyReceiptResponse.parse(text.utf8).status == 21005)
    }

    @Test func transactionFieldsAreTyped() throws {
        let response = try parse(
            #"""
            {"status": 0, "environment": "Sandbox",
             "latest_receipt_info": [{"transaction_id": 42, "original_transaction_id": "41", "product_id": "p",
               "quantity": "2", "purchase_date_ms": "1717200000123", "purchase_date": "2024-06-01 00:00:00 Etc/GMT",
               "expires_date_ms": 1717200060000, "expires_date": "1999-01-01 00:00:00 Etc/GMT",
               "cancellation_date_ms": "1717200030000", "cancellation_reason": "1", "is_upgraded": "false",
               "is_trial_period": "true", "is_in_intro_offer_period": 0, "in_app_ownership_type": "FAMILY_SHARED",
               "offer_code_ref_name": "SPRING", "promotional_offer_id": "", "subscription_group_identifier": 2050,
               "web_order_line_item_id": "230000000000001", "app_account_token": "A1B2"}],
             "pending_renewal_info": [{"original_transaction_id": 41, "auto_renew_status": "0",
               "auto_renew_product_id": "q", "expiration_intent": "2", "is_in_billing_retry_period": "1",
               "grace_period_expires_date_ms": "1717300000000", "price_consent_status": "1"}],
             "latest_receipt": "MIIabc"}
            """#
        )
        #expect(response.environment == .sandbox)
        let transaction = try #require(response.latestReceiptInfo?.first)
        #expect(transaction.transactionId == "42")
        #expect(transaction.originalTransactionId == "41")
        #expect(transaction.quantity == 2)
        #expect(transaction.purchaseDate == Date(timeIntervalSince1970: 1_717_200_000.123))
        // Only the _ms field counts, never the formatted string.
        #expect(transaction.expiresDate == Date(timeIntervalSince1970: 1_717_200_060))
        #expect(transaction.cancellationReason == 1)
        #expect(transaction.isRefunded)
        #expect(transaction.isTrialPeriod && !transaction.isInIntroOfferPeriod)
        #expect(transaction.inAppOwnershipType == "FAMILY_SHARED")
        #expect(transaction.promotionalOfferId == nil)  // empty string = absent
        #expect(transaction.subscriptionGroupIdentifier == "2050")
        let pending = try #require(response.pendingRenewalInfo.first)
        #expect(pending.originalTransactionId == "41")
        #expect(pending.autoRenewStatus == false)
        #expect(pending.expirationIntent == 2)
        #expect(pending.isInBillingRetryPeriod == true)
        #expect(pending.gracePeriodExpiresDate == Date(timeIntervalSince1970: 1_717_300_000))
        #expect(response.latestReceipt == "MIIabc")
    }

    @Test func missingRequiredTransactionFieldIsNamed() {
        let error = parseError(#"{"status": 0, "receipt": {"in_app": [{"transaction_id": "1", "product_id": "p"}]}}"#)
        #expect(error?.code == .missingField)
        #expect(error?.field == "receipt.in_app[0].original_transaction_id")
    }

    @Test func errorDescriptionsTruncateValues() {
        let receiptLike = String(repeating: "MIIUVQYJKoZIhvcNAQcCoIIURjCCFEICAQExCzAJBgUrDgMCGgUAMIID", count: 200)
        let error = parseError(
            #"{"status": 0, "latest_receipt_info": [{"transaction_id": "1", "original_transaction_id": "1", "product_id": "p", "expires_date_ms": "\#(receiptLike)"}]}"#
        )
        let text = error?.description ?? ""
        #expect(text.contains("latest_receipt_info[0].expires_date_ms"))
        #expect(text.count < 200, "\(text)")
        #expect(text.contains("\(receiptLike.count) chars"))
    }

    @Test func absentLatestReceiptInfoFallsBackToInApp() throws {
        let response = try parse(
            #"{"status": 0, "receipt": {"in_app": [{"transaction_id": "1", "original_transaction_id": "1", "product_id": "p"}]}}"#
        )
        #expect(response.latestReceiptInfo == nil)
        #expect(response.subscriptionTransactions.map(\.transactionId) == ["1"])
    }
}
