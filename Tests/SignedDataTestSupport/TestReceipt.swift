import Foundation

/// App receipts made at test time: PKCS#7 SignedData around a SET of receipt attributes, encoded either in
/// DER or in BER with indefinite lengths and a segmented (constructed) content OCTET STRING, the way
/// Xcode and StoreKit write them. The signature part is empty: nobody checks it (docs/signed-data.md).
public enum TestReceipt {
    public struct Record: Sendable {
        public var transactionId: String
        public var originalTransactionId: String
        public var productId: String
        public var purchaseDate: String
        public var expiresDate: String
        public var quantity: Int

        public init(
            transactionId: String,
            originalTransactionId: String,
            productId: String = "com.example.reader.monthly",
            purchaseDate: String = "2026-10-21T03:00:00Z",
            expiresDate: String = "2026-11-21T03:00:00Z",
            quantity: Int = 1
        ) {
            self.transactionId = transactionId
            self.originalTransactionId = originalTransactionId
            self.productId = productId
            self.purchaseDate = purchaseDate
            self.expiresDate = expiresDate
            self.quantity = quantity
        }
    }

    public enum Encoding: Sendable { case der, indefiniteBER }

    /// The receipt's bytes.
    public static func appReceipt(bundleId: String, records: [Record], encoding: Encoding) -> [UInt8] {
        let ber = encoding == .indefiniteBER
        var attributes = [
            attribute(2, utf8(bundleId), ber: ber),
            attribute(3, utf8("42"), ber: ber),
            attribute(19, utf8("1.0"), ber: ber),
        ]
        for record in records {
            let inner = set(
                [
                    attribute(1701, integer(Int64(record.quantity)), ber: ber),
                    attribute(1702, utf8(record.productId), ber: ber),
                    attribute(1703, utf8(record.transactionId), ber: ber),
                    attribute(1705, utf8(record.originalTransactionId), ber: ber),
                    attribute(1704, ia5(record.purchaseDate), ber: ber),
                    attribute(1706, ia5(record.purchaseDate), ber: ber),
                    attribute(1708, ia5(record.expiresDate), ber: ber),
                ],
                ber: ber
            )
            attributes.append(attribute(17, inner, ber: ber))
        }
        let payload = set(attributes, ber: ber)
        let content: [UInt8]
        if ber {
            // A constructed OCTET STRING of 100-byte segments, indefinite length.
            var segments: [UInt8] = []
            var offset = 0
            while offset < payload.count {
                let end = min(offset + 100, payload.count)
                segments += tlv(0x04, Array(payload[offset..<end]), ber: false)
                offset = end
            }
            content = [0x24, 0x80] + segments + [0x00, 0x00]
        } else {
            content = tlv(0x04, payload, ber: false)
        }
        let encapsulated = tlv(0x30, oid([1, 2, 840, 113_549, 1, 7, 1]) + tlv(0xA0, content, ber: ber), ber: ber)
        let digest = tlv(0x31, tlv(0x30, oid([2, 16, 840, 1, 101, 3, 4, 2, 1]) + [0x05, 0x00], ber: ber), ber: ber)
        let signedData = tlv(0x30, integer(1) + digest + encapsulated + tlv(0x31, [], ber: ber), ber: ber)
        return tlv(0x30, oid([1, 2, 840, 113_549, 1, 7, 2]) + tlv(0xA0, signedData, ber: ber), ber: ber)
    }

    /// An iOS 6 style transaction receipt's bytes (plist text; base64 them to store).
    public static func transactionReceipt(
        transactionId: String,
        originalTransactionId: String,
        bundleId: String
    ) -> [UInt8] {
        let info = """
            {
            \t"original-purchase-date-pst" = "2012-07-12 05:54:35 America/Los_Angeles";
            \t"purchase-date-ms" = "1342097675882";
            \t"original-transaction-id" = "\(originalTransactionId)";
            \t"bid" = "\(bundleId)";
            \t"product-id" = "com.example.reader.monthly";
            \t"transaction-id" = "\(transactionId)";
            \t"quantity" = "1";
            \t"expires-date" = "1344776075882";
            }
            """
        let outer = """
            {
            \t"signature" = "AkGKgR5u0RDQwM5nQyPGRmU3SCtdzEM+Ht/Ijt0x2sdbS/zZkFz0HmIwmZwMsWOWr+VHc7NoxFsDEwoi";
            \t"purchase-info" = "\(Data(info.utf8).base64EncodedString())";
            \t"environment" = "Sandbox";
            \t"pod" = "100";
            \t"signing-status" = "0";
            }
            """
        return Array(outer.utf8)
    }

    // MARK: TLV encoding

    static func attribute(_ type: Int64, _ value: [UInt8], ber: Bool) -> [UInt8] {
        tlv(0x30, integer(type) + integer(1) + tlv(0x04, value, ber: false), ber: ber)
    }

    static func set(_ members: [[UInt8]], ber: Bool) -> [UInt8] { tlv(0x31, members.flatMap { $0 }, ber: ber) }
    static func utf8(_ text: String) -> [UInt8] { tlv(0x0C, Array(text.utf8), ber: false) }
    static func ia5(_ text: String) -> [UInt8] { tlv(0x16, Array(text.utf8), ber: false) }

    static func integer(_ value: Int64) -> [UInt8] {
        var bytes = withUnsafeBytes(of: value.bigEndian, Array.init)
        while bytes.count > 1, (bytes[0] == 0 && bytes[1] & 0x80 == 0) || (bytes[0] == 0xFF && bytes[1] & 0x80 != 0) {
            bytes.removeFirst()
        }
        return tlv(0x02, bytes, ber: false)
    }

    static func oid(_ arcs: [UInt64]) -> [UInt8] {
        var body: [UInt8] = [UInt8(arcs[0] * 40 + arcs[1])]
        for arc in arcs.dropFirst(2) {
            var chunk: [UInt8] = [UInt8(arc & 0x7F)]
            var rest = arc >> 7
            while rest > 0 {
                chunk.insert(UInt8(rest & 0x7F) | 0x80, at: 0)
                rest >>= 7
            }
            body += chunk
        }
        return tlv(0x06, body, ber: false)
    }

    /// One TLV; constructed tags use the indefinite length (0x80 ... 00 00) when `ber`.
    static func tlv(_ tag: UInt8, _ value: [UInt8], ber: Bool) -> [UInt8] {
        if ber && tag & 0x20 != 0 { return [tag, 0x80] + value + [0x00, 0x00] }
        return [tag] + length(value.count) + value
    }

    static func length(_ count: Int) -> [UInt8] {
        if count < 0x80 { return [UInt8(count)] }
        var bytes: [UInt8] = []
        var rest = count
        while rest > 0 {
            bytes.insert(UInt8(rest & 0xFF), at: 0)
            rest >>= 8
        }
        return [0x80 | UInt8(bytes.count)] + bytes
    }
}

extension TestReceipt {
    /// `SEQUENCE { OID }` plus an empty `[0]`: a PKCS#7 ContentInfo of another content type.
    public static func tlvSequence(oid arcs: [UInt64]) -> [UInt8] {
        tlv(0x30, oid(arcs) + tlv(0xA0, tlv(0x30, [], ber: false), ber: false), ber: false)
    }
}
