import Foundation

/// Reads an iOS 6 style transaction receipt: OpenStep plist text (`{ "key" = "value"; ... }`) whose
/// `purchase-info` is base64 of another such plist holding `transaction-id`, `original-transaction-id`,
/// `product-id`, `bid`, `quantity` and dates in milliseconds (docs/signed-data.md).
enum TransactionReceiptParser {
    static func parse(_ bytes: [UInt8]) throws(AppReceiptError) -> StoredReceipt {
        let outer = try plist(bytes, what: "the transaction receipt")
        guard let purchaseInfo = outer["purchase-info"] else {
            throw AppReceiptError(.malformedTransactionReceipt, "the transaction receipt has no purchase-info")
        }
        guard let inner = ReceiptBase64.decode(purchaseInfo.filter { !$0.isWhitespace }) else {
            throw AppReceiptError(.malformedTransactionReceipt, "purchase-info is not base64")
        }
        let info = try plist(inner, what: "purchase-info")
        guard info["transaction-id"] != nil || info["original-transaction-id"] != nil else {
            throw AppReceiptError(.malformedTransactionReceipt, "purchase-info has no transaction-id")
        }
        let record = InAppPurchaseRecord(
            quantity: info["quantity"].flatMap { Int($0) },
            productId: info["product-id"],
            transactionId: info["transaction-id"],
            originalTransactionId: info["original-transaction-id"],
            purchaseDate: info["purchase-date-ms"].flatMap(ReceiptDate.fromMilliseconds),
            originalPurchaseDate: info["original-purchase-date-ms"].flatMap(ReceiptDate.fromMilliseconds),
            expiresDate: (info["expires-date"] ?? info["expires-date-ms"]).flatMap(ReceiptDate.fromMilliseconds),
            webOrderLineItemId: info["web-order-line-item-id"],
            cancellationDate: info["cancellation-date-ms"].flatMap(ReceiptDate.fromMilliseconds)
        )
        return StoredReceipt(kind: .transactionReceipt, bundleId: info["bid"], inApp: [record])
    }

    /// `{ "key" = "value"; ... }` with quoted keys and values (backslash escapes), the form these receipts use.
    static func plist(_ bytes: [UInt8], what: String) throws(AppReceiptError) -> [String: String] {
        var index = 0
        func skipSpace() {
            while index < bytes.count, StoredReceipt.isSpace(bytes[index]) { index += 1 }
        }
        func fail(_ problem: String) -> AppReceiptError {
            AppReceiptError(.malformedTransactionReceipt, "\(what): \(problem) at byte \(index)")
        }
        func quoted() throws(AppReceiptError) -> String {
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw fail("expected a quoted string")
            }
            index += 1
            var value: [UInt8] = []
            while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                if bytes[index] == UInt8(ascii: "\\"), index + 1 < bytes.count { index += 1 }
                value.append(bytes[index])
                index += 1
            }
            guard index < bytes.count else { throw fail("unterminated string") }
            index += 1
            return String(decoding: value, as: UTF8.self)
        }
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else { throw fail("expected {") }
        index += 1
        var result: [String: String] = [:]
        while true {
            skipSpace()
            guard index < bytes.count else { throw fail("no closing }") }
            if bytes[index] == UInt8(ascii: "}") { break }
            let key = try quoted()
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else { throw fail("expected =") }
            index += 1
            skipSpace()
            let value = try quoted()
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ";") else { throw fail("expected ;") }
            index += 1
            result[key] = value
        }
        return result
    }
}
