/// Why a stored receipt yielded no transaction ids. Names the problem and the position, never the receipt.
public struct AppReceiptError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, Equatable, CaseIterable {
        /// Empty input.
        case empty = "empty"
        /// Not base64 text.
        case notBase64 = "not_base64"
        /// Neither PKCS#7 (BER/DER) nor an iOS 6 style transaction receipt.
        case notAReceipt = "not_a_receipt"
        /// The BER ends in the middle of a field (a receipt cut short by a column limit, say).
        case truncated = "truncated"
        /// PKCS#7, but not SignedData, or its content is not `data`.
        case wrongContentType = "wrong_content_type"
        /// SignedData without the receipt payload.
        case missingContent = "missing_content"
        /// The payload is not a SET of `SEQUENCE { type, version, OCTET STRING }` attributes, or a value is
        /// not of its documented type.
        case malformedAttribute = "malformed_attribute"
        /// An iOS 6 style transaction receipt whose plist or `purchase-info` does not read.
        case malformedTransactionReceipt = "malformed_transaction_receipt"
    }

    public let code: Code
    public let detail: String

    public init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    public var description: String { "\(code.rawValue): \(detail)" }
}
