import Foundation
import SwiftASN1

/// Reads an app receipt: PKCS#7 SignedData in BER (indefinite lengths and constructed OCTET STRINGs
/// included, as Xcode and StoreKit write them) whose content is a SET of
/// `SEQUENCE { INTEGER type, INTEGER version, OCTET STRING value }` attributes. Type 2 is the bundle id,
/// type 3 the app version, each type 17 one in-app purchase in the same attribute form (docs/signed-data.md).
/// The signature is not checked. Every bad input is a named `AppReceiptError`, never a crash or nil.
enum AppReceiptParser {
    static let signedDataOID: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 7, 2]
    static let dataOID: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 7, 1]

    static func parse(_ bytes: [UInt8]) throws(AppReceiptError) -> StoredReceipt {
        let root = try ber(bytes[...], what: "the receipt")
        // ContentInfo ::= SEQUENCE { contentType OID, content [0] EXPLICIT SignedData }
        let contentInfo = try children(root, what: "the PKCS#7 ContentInfo", expect: .sequence, error: .notAReceipt)
        guard contentInfo.count >= 1, let type = try? ASN1ObjectIdentifier(berEncoded: contentInfo[0]) else {
            throw AppReceiptError(.notAReceipt, "no PKCS#7 content type")
        }
        guard type == signedDataOID else {
            throw AppReceiptError(
                .wrongContentType,
                "PKCS#7 content type \(type), not signedData (1.2.840.113549.1.7.2)"
            )
        }
        guard contentInfo.count >= 2,
            contentInfo[1].identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)
        else {
            throw AppReceiptError(.missingContent, "the PKCS#7 ContentInfo has no [0] content")
        }
        let explicit = try children(contentInfo[1], what: "the [0] content", expect: nil, error: .notAReceipt)
        guard let signedDataNode = explicit.first else {
            throw AppReceiptError(.missingContent, "the PKCS#7 [0] content is empty")
        }
        // SignedData ::= SEQUENCE { version, digestAlgorithms SET, encapContentInfo SEQUENCE, ... }
        let signedData = try children(signedDataNode, what: "SignedData", expect: .sequence, error: .notAReceipt)
        guard signedData.count >= 3 else {
            throw AppReceiptError(.notAReceipt, "SignedData has \(signedData.count) fields, expected at least 3")
        }
        let encap = try children(signedData[2], what: "EncapsulatedContentInfo", expect: .sequence, error: .notAReceipt)
        guard let eContentType = encap.first.flatMap({ try? ASN1ObjectIdentifier(berEncoded: $0) }) else {
            throw AppReceiptError(.notAReceipt, "EncapsulatedContentInfo has no content type")
        }
        guard eContentType == dataOID else {
            throw AppReceiptError(
                .wrongContentType,
                "the signed content type is \(eContentType), not data (1.2.840.113549.1.7.1)"
            )
        }
        guard encap.count >= 2, encap[1].identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)
        else {
            throw AppReceiptError(.missingContent, "SignedData carries no content (a detached signature)")
        }
        guard let octets = try children(encap[1], what: "the [0] eContent", expect: nil, error: .notAReceipt).first
        else {
            throw AppReceiptError(.missingContent, "the [0] eContent is empty")
        }
        let payload = try octetString(octets, what: "the receipt payload")

        var receipt = StoredReceipt(kind: .appReceipt, bundleId: nil, inApp: [])
        for attribute in try attributes(payload, what: "the receipt payload") {
            switch attribute.type {
            case 2: receipt.bundleId = try text(attribute, what: "bundle id (type 2)")
            case 3: receipt.applicationVersion = try text(attribute, what: "app version (type 3)")
            case 17: receipt.inApp.append(try inAppRecord(attribute.value, index: receipt.inApp.count))
            default: continue
            }
        }
        return receipt
    }

    // MARK: Attributes

    struct Attribute {
        let type: Int64
        let value: ArraySlice<UInt8>
    }

    /// A SET (or, leniently, a SEQUENCE) of `SEQUENCE { INTEGER type, INTEGER version, OCTET STRING value }`.
    static func attributes(_ bytes: ArraySlice<UInt8>, what: String) throws(AppReceiptError) -> [Attribute] {
        let node = try ber(bytes, what: what)
        guard node.identifier == .set || node.identifier == .sequence else {
            throw AppReceiptError(.malformedAttribute, "\(what) is not a SET of attributes")
        }
        let members = try children(node, what: what, expect: nil, error: .malformedAttribute)
        var found: [Attribute] = []
        found.reserveCapacity(members.count)
        for (index, member) in members.enumerated() {
            let fields = try children(
                member,
                what: "\(what), attribute \(index)",
                expect: .sequence,
                error: .malformedAttribute
            )
            guard fields.count >= 3, let type = try? Int64(berEncoded: fields[0]) else {
                throw AppReceiptError(
                    .malformedAttribute,
                    "\(what), attribute \(index) is not SEQUENCE { type, version, value }"
                )
            }
            let value = try octetString(fields[2], what: "\(what), attribute \(index) (type \(type))")
            found.append(Attribute(type: type, value: value))
        }
        return found
    }

    static func inAppRecord(_ bytes: ArraySlice<UInt8>, index: Int) throws(AppReceiptError) -> InAppPurchaseRecord {
        let what = "in-app record \(index)"
        var record = InAppPurchaseRecord()
        for attribute in try attributes(bytes, what: what) {
            switch attribute.type {
            case 1701:
                record.quantity = try integer(attribute, what: "\(what), quantity (1701)").flatMap { Int(exactly: $0) }
            case 1702: record.productId = try text(attribute, what: "\(what), product id (1702)")
            case 1703: record.transactionId = try text(attribute, what: "\(what), transaction id (1703)")
            case 1705:
                record.originalTransactionId = try text(attribute, what: "\(what), original transaction id (1705)")
            case 1704: record.purchaseDate = try date(attribute, what: "\(what), purchase date (1704)")
            case 1706: record.originalPurchaseDate = try date(attribute, what: "\(what), original purchase date (1706)")
            case 1708: record.expiresDate = try date(attribute, what: "\(what), expires date (1708)")
            case 1711:
                record.webOrderLineItemId = try integer(attribute, what: "\(what), web order line item (1711)").map(
                    String.init
                )
            case 1712: record.cancellationDate = try date(attribute, what: "\(what), cancellation date (1712)")
            default: continue
            }
        }
        return record
    }

    // MARK: Values

    /// A UTF8String, IA5String or PrintableString inside the attribute's OCTET STRING.
    static func text(_ attribute: Attribute, what: String) throws(AppReceiptError) -> String {
        let node = try ber(attribute.value, what: what)
        let stringTags: [ASN1Identifier] = [.utf8String, .ia5String, .printableString]
        guard stringTags.contains(node.identifier) else {
            throw AppReceiptError(.malformedAttribute, "\(what) is not a string")
        }
        let bytes = try octetString(node, what: what, allowing: node.identifier)
        guard let string = String(validating: bytes, as: UTF8.self) else {
            throw AppReceiptError(.malformedAttribute, "\(what) is not UTF-8")
        }
        return string
    }

    static func integer(_ attribute: Attribute, what: String) throws(AppReceiptError) -> Int64? {
        let node = try ber(attribute.value, what: what)
        guard let value = try? Int64(berEncoded: node) else {
            throw AppReceiptError(.malformedAttribute, "\(what) is not an integer that fits 64 bits")
        }
        return value
    }

    /// An RFC 3339 date in an IA5String; empty text means "none".
    static func date(_ attribute: Attribute, what: String) throws(AppReceiptError) -> Date? {
        let string = try text(attribute, what: what)
        if string.isEmpty { return nil }
        guard let date = ReceiptDate.parseRFC3339(string) else {
            throw AppReceiptError(.malformedAttribute, "\(what) is not an RFC 3339 date")
        }
        return date
    }

    // MARK: BER helpers

    static func ber(_ bytes: ArraySlice<UInt8>, what: String) throws(AppReceiptError) -> ASN1Node {
        guard !bytes.isEmpty else { throw AppReceiptError(.malformedAttribute, "\(what) is empty") }
        do {
            return try BER.parse(bytes)
        } catch let error as ASN1Error where error.code == .truncatedASN1Field {
            throw AppReceiptError(.truncated, "\(what) ends in the middle of a field (\(bytes.count) bytes)")
        } catch {
            throw AppReceiptError(what == "the receipt" ? .notAReceipt : .malformedAttribute, "\(what) is not BER")
        }
    }

    static func children(
        _ node: ASN1Node,
        what: String,
        expect: ASN1Identifier?,
        error code: AppReceiptError.Code
    ) throws(AppReceiptError) -> [ASN1Node] {
        if let expect, node.identifier != expect {
            throw AppReceiptError(code, "\(what) is not a \(expect == .sequence ? "SEQUENCE" : "\(expect)")")
        }
        guard case .constructed(let collection) = node.content else {
            throw AppReceiptError(code, "\(what) is not a constructed value")
        }
        return Array(collection)
    }

    /// An OCTET STRING's bytes, primitive or (BER) constructed from segments.
    static func octetString(
        _ node: ASN1Node,
        what: String,
        allowing tag: ASN1Identifier = .octetString,
        depth: Int = 0
    ) throws(AppReceiptError) -> ArraySlice<UInt8> {
        guard node.identifier == tag else {
            throw AppReceiptError(.malformedAttribute, "\(what) is not an OCTET STRING")
        }
        switch node.content {
        case .primitive(let bytes):
            return bytes
        case .constructed(let segments):
            guard depth < 8 else { throw AppReceiptError(.malformedAttribute, "\(what) nests segments too deeply") }
            var joined: [UInt8] = []
            for segment in segments {
                joined += try octetString(segment, what: what, allowing: tag, depth: depth + 1)
            }
            return joined[...]
        }
    }
}
