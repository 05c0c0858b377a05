import AppStoreSignedData
import Foundation
import SignedDataTestSupport
import Testing

/// Transaction ids out of stored receipts built at test time, in DER and in indefinite-length BER.
@Suite struct StoredReceiptTests {
    static let records = [
        TestReceipt.Record(transactionId: "1000000811111111", originalTransactionId: "1000000811111111"),
        TestReceipt.Record(
            transactionId: "1000000811111203",
            originalTransactionId: "1000000811111111",
            purchaseDate: "2026-11-21T03:00:00Z",
            expiresDate: "2026-12-21T03:00:00Z"
        ),
        TestReceipt.Record(
            transactionId: "1000000922222222",
            originalTransactionId: "1000000922222222",
            productId: "com.example.reader.coins",
            expiresDate: "",
            quantity: 3
        ),
    ]

    private func parse(_ bytes: [UInt8]) throws -> StoredReceipt {
        try StoredReceipt.parse(base64: Data(bytes).base64EncodedString())
    }

    private func code(_ text: String) -> AppReceiptError.Code? {
        do {
            _ = try StoredReceipt.parse(base64: text)
            return nil
        } catch {
            return error.code
        }
    }

    @Test(arguments: [TestReceipt.Encoding.der, .indefiniteBER], [0, 1, 3])
    func everyRecordIsFound(encoding: TestReceipt.Encoding, count: Int) throws {
        let records = Array(Self.records.prefix(count))
        let bytes = TestReceipt.appReceipt(bundleId: "com.example.reader", records: records, encoding: encoding)
        if encoding == .indefiniteBER { #expect(bytes[1] == 0x80, "not indefinite-length") }
        let receipt = try parse(bytes)
        #expect(receipt.kind == .appReceipt)
        #expect(receipt.bundleId == "com.example.reader")
        #expect(receipt.applicationVersion == "42")
        #expect(receipt.signatureChecked == false)
        #expect(receipt.inApp.map(\.transactionId) == records.map(\.transactionId))
        #expect(receipt.inApp.map(\.originalTransactionId) == records.map(\.originalTransactionId))
        #expect(receipt.inApp.map(\.productId) == records.map(\.productId))
        if count >= 2 {
            #expect(receipt.inApp[1].expiresDate == Date(timeIntervalSince1970: 1_797_822_000))
            #expect(receipt.inApp[1].purchaseDate == Date(timeIntervalSince1970: 1_795_230_000))
        }
        if count == 3 {
            #expect(receipt.inApp[2].expiresDate == nil)
            #expect(receipt.inApp[2].quantity == 3)
        }
    }

    @Test func theSameReceiptReadsTheSameInDERAndBER() throws {
        let der = try parse(TestReceipt.appReceipt(bundleId: "b", records: Self.records, encoding: .der))
        let ber = try parse(TestReceipt.appReceipt(bundleId: "b", records: Self.records, encoding: .indefiniteBER))
        #expect(der == ber)
    }

    @Test func everyTruncationIsANamedError() throws {
        for encoding in [TestReceipt.Encoding.der, .indefiniteBER] {
            let bytes = TestReceipt.appReceipt(
                bundleId: "com.example.reader",
                records: Self.records,
                encoding: encoding
            )
            for length in stride(from: 1, to: bytes.count, by: 7) {
                let text = Data(bytes.prefix(length)).base64EncodedString()
                let found = code(text)
                #expect(found != nil, "\(encoding) cut at \(length) parsed")
                #expect(
                    found == .truncated || found == .notAReceipt || found == .malformedAttribute
                        || found == .missingContent,
                    "\(encoding) cut at \(length): \(String(describing: found))"
                )
            }
        }
        // Cutting the outermost definite length is reported as truncated.
        let der = TestReceipt.appReceipt(bundleId: "b", records: Self.records, encoding: .der)
        #expect(code(Data(der.prefix(der.count - 5)).base64EncodedString()) == .truncated)
    }

    @Test func garbageIsANamedError() {
        #expect(code("") == .empty)
        #expect(code("   \n") == .empty)
        #expect(code("not base64 at all!") == .notBase64)
        #expect(code(Data("hello world".utf8).base64EncodedString()) == .notAReceipt)
        #expect(code(Data([0x30, 0x03, 0x02, 0x01, 0x01]).base64EncodedString()) == .notAReceipt)
        #expect(code(Data((0..<200).map { UInt8(truncatingIfNeeded: $0 &* 37) }).base64EncodedString()) != nil)
        // PKCS#7 of another type (envelopedData).
        let enveloped = TestReceipt.tlvSequence(oid: [1, 2, 840, 113_549, 1, 7, 3])
        #expect(code(Data(enveloped).base64EncodedString()) == .wrongContentType)
    }

    @Test func anIOS6TransactionReceiptIsRead() throws {
        let bytes = TestReceipt.transactionReceipt(
            transactionId: "170000029449420",
            originalTransactionId: "170000029449400",
            bundleId: "com.example.reader"
        )
        let receipt = try parse(bytes)
        #expect(receipt.kind == .transactionReceipt)
        #expect(receipt.bundleId == "com.example.reader")
        #expect(receipt.inApp.count == 1)
        #expect(receipt.inApp.first?.transactionId == "170000029449420")
        #expect(receipt.inApp.first?.originalTransactionId == "170000029449400")
        #expect(receipt.inApp.first?.expiresDate == Date(timeIntervalSince1970: 1_344_776_075.882))
        #expect(code(Data(#"{ "signature" = "x"; }"#.utf8).base64EncodedString()) == .malformedTransactionReceipt)
        #expect(code(Data(#"{ "purchase-info" = "e30="; "#.utf8).base64EncodedString()) == .malformedTransactionReceipt)
    }
}
