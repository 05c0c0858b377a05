/// What a stored receipt says, read without checking its signature (docs/signed-data.md: Apple's own
/// libraries do not check it either; the ids only serve to ask the App Store Server API).
public struct StoredReceipt: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable {
        /// PKCS#7 app receipt (iOS 7 and later).
        case appReceipt = "app_receipt"
        /// iOS 6 style transaction receipt (base64 plist text).
        case transactionReceipt = "transaction_receipt"
    }

    public var kind: Kind
    /// Attribute type 2 (`bid` in a transaction receipt).
    public var bundleId: String?
    /// Attribute type 3.
    public var applicationVersion: String?
    /// Every in-app purchase record, in receipt order.
    public var inApp: [InAppPurchaseRecord]
    /// Always false: nothing here checks the receipt's signature.
    public var signatureChecked: Bool { false }

    public init(kind: Kind, bundleId: String?, applicationVersion: String? = nil, inApp: [InAppPurchaseRecord]) {
        self.kind = kind
        self.bundleId = bundleId
        self.applicationVersion = applicationVersion
        self.inApp = inApp
    }

    /// Reads a stored receipt as the app stored it: base64 text of an app receipt or of an iOS 6 style
    /// transaction receipt. Whitespace and line breaks in the base64 are tolerated.
    public static func parse(base64 text: String) throws(AppReceiptError) -> StoredReceipt {
        let compact = text.filter { !$0.isWhitespace }
        guard !compact.isEmpty else { throw AppReceiptError(.empty, "the receipt is empty") }
        guard let bytes = ReceiptBase64.decode(compact) else {
            throw AppReceiptError(.notBase64, "the receipt is not base64 text (\(compact.utf8.count) characters)")
        }
        return try parse(bytes: bytes)
    }

    /// Reads decoded receipt bytes: PKCS#7 (BER or DER), or the plist text of a transaction receipt.
    public static func parse(bytes: [UInt8]) throws(AppReceiptError) -> StoredReceipt {
        guard let first = bytes.first(where: { !Self.isSpace($0) }) else {
            throw AppReceiptError(.empty, "the receipt is empty")
        }
        if bytes.first == 0x30 { return try AppReceiptParser.parse(bytes) }
        if first == UInt8(ascii: "{") { return try TransactionReceiptParser.parse(bytes) }
        throw AppReceiptError(
            .notAReceipt,
            "neither PKCS#7 (first byte 0x30) nor a transaction receipt plist (first byte \"{\")"
        )
    }

    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
}
