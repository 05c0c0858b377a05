import Foundation
import Testing

@testable import AppStoreClient

/// The request body's string escaping: the fast path (nothing to escape) and the slow path agree with JSON.
@Suite struct VerifyReceiptRequestBodyEscapingTests {
    @Test func base64ReceiptIsCopiedVerbatim() throws {
        let receipt = String(repeating: "MIIT+/abcXYZ019==", count: 300)
        let body = VerifyReceiptRequestBody.encode(receipt: receipt, password: "secret", excludeOldTransactions: false)
        let object = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        #expect(object["receipt-data"] as? String == receipt)
        #expect(object["password"] as? String == "secret")
    }

    @Test func quotesBackslashesAndControlCharactersAreEscaped() throws {
        let receipt = "a\"b\\c\nd\re\tf\u{01}g é"
        var out: [UInt8] = []
        VerifyReceiptRequestBody.appendEscaped(receipt, to: &out)
        #expect(String(decoding: out, as: UTF8.self) == #"a\"b\\c\nd\re\tf\u0001g é"#)
        let body = VerifyReceiptRequestBody.encode(receipt: receipt, password: nil, excludeOldTransactions: true)
        let object = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        #expect(object["receipt-data"] as? String == receipt)
        #expect(object["exclude-old-transactions"] as? Bool == true)
    }
}
