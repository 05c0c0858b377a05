import Crypto
import Foundation
import SwiftASN1
import X509

/// Writes the stored receipts of `purchases.jsonl` as app receipts shaped like Xcode's and StoreKit's
/// (docs/simulator.md, "Stored receipts"): base64 of a PKCS#7 ContentInfo (signedData) whose signed content
/// is the receipt payload, a SET of `SEQUENCE { INTEGER type, INTEGER version, OCTET STRING value }`
/// attributes: bundle id (2), app version (3), opaque value (4), SHA-1 hash (5), creation date (12), original
/// purchase date (18), original application version (19), one in-app purchase record (17) per transaction
/// the receipt covers, in the same attribute form (1701 quantity, 1702 product id, 1703 transaction id, 1704
/// purchase date, 1705 original transaction id, 1706 original purchase date, 1708 expires date, 1711 web
/// order line item id, 1712 cancellation date, 1713 trial, 1719 intro offer).
///
/// The opaque value carries what the simulator needs to answer the receipt (`AppReceiptReader`). The signer
/// is the simulator's own Ed25519 key (a self-signed certificate in the certificate set); Ed25519 is
/// deterministic, so the same population gives the same bytes. A deterministic quarter of the families get
/// indefinite-length BER (the eContent as a constructed OCTET STRING of 1,000-byte segments); the rest DER.
struct AppReceiptEncoder: Sendable {
    static let signedDataOID: [UInt64] = [1, 2, 840, 113_549, 1, 7, 2]
    static let dataOID: [UInt64] = [1, 2, 840, 113_549, 1, 7, 1]
    static let sha512OID: [UInt64] = [2, 16, 840, 1, 101, 3, 4, 2, 3]
    static let ed25519OID: [UInt64] = [1, 3, 101, 112]
    /// An attribute type Apple leaves undocumented (reserved: readers skip it); it pads receipts to the size
    /// the population asks for (`long_history` receipts over 100 KB) and makes every reissue longer.
    static let paddingType: Int64 = 27
    static let segmentLength = 1000

    let seed: UInt64
    let key: Curve25519.Signing.PrivateKey
    let certificate: [UInt8]
    let issuerAndSerial: BERNode

    init(seed: UInt64, anchor: Int64) {
        self.seed = seed
        key = Self.signingKey(seed: seed)
        let day = anchor / SimTime.day * SimTime.day
        let serial: [UInt8] = [0x01] + withUnsafeBytes(of: SeededRandom.hash(seed, 0x5EC7).bigEndian) { Array($0) }
        do {
            let name = try DistinguishedName {
                CommonName("Simulator App Store Receipt Signing (seed \(seed))")
                OrganizationalUnitName("App Store Simulator")
                OrganizationName("renewal-reconciler simulator")
                CountryName("US")
            }
            let cert = try Certificate(
                version: .v3,
                serialNumber: Certificate.SerialNumber(bytes: serial),
                publicKey: .init(key.publicKey),
                notValidBefore: Date(timeIntervalSince1970: Double(day - 20 * 365 * SimTime.day) / 1000),
                notValidAfter: Date(timeIntervalSince1970: Double(day + 10 * 365 * SimTime.day) / 1000),
                issuer: name,
                subject: name,
                signatureAlgorithm: .ed25519,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.notCertificateAuthority)
                    Critical(KeyUsage(digitalSignature: true))
                },
                issuerPrivateKey: .init(key)
            )
            var serializer = DER.Serializer()
            try serializer.serialize(cert)
            certificate = serializer.serializedBytes
            var nameSerializer = DER.Serializer()
            try nameSerializer.serialize(name)
            issuerAndSerial = .sequence([.encoded(nameSerializer.serializedBytes), .primitive(tag: 0x02, serial)])
        } catch {
            fatalError("building the simulator's receipt signing certificate failed: \(error)")
        }
    }

    /// The receipt signing key, from a seeded hash (the reader derives the same public key).
    static func signingKey(seed: UInt64) -> Curve25519.Signing.PrivateKey {
        var hasher = SHA256()
        hasher.update(data: Array("appstore-simulator/receipt-signing/".utf8))
        withUnsafeBytes(of: seed.bigEndian) { hasher.update(bufferPointer: $0) }
        // Any 32 bytes are an Ed25519 private key.
        return try! Curve25519.Signing.PrivateKey(rawRepresentation: Array(hasher.finalize()))
    }

    /// Whether a family's stored receipt is written in indefinite-length BER: a quarter of them, by seed.
    static func usesIndefiniteLength(seed: UInt64, familyIndex: Int) -> Bool {
        SeededRandom.hash(seed, 0xBE7, UInt64(familyIndex)) % 4 == 0
    }

    /// One in-app purchase record (attribute 17's value): its own attribute SET, written into `record`
    /// (emptied first, so one buffer serves every record of a receipt).
    private static func inAppRecord(_ t: SimTransaction, into record: inout ReceiptAttributeSet) {
        record.removeAll()
        record.add(1701, integer: 1)
        record.add(1702, utf8: t.product.productId)
        record.add(1703, decimalText: t.transactionId)
        record.add(1704, date: t.purchase)
        record.add(1705, decimalText: t.originalTransactionId)
        record.add(1706, date: t.originalPurchase)
        record.add(1708, date: t.expires)
        record.add(1711, integer: Int64(bitPattern: t.webOrderLineItemId))
        // Apple writes an empty date when there is no cancellation.
        record.add(1712, date: t.cancellation)
        record.add(1713, integer: t.isTrial ? 1 : 0)
        record.add(1719, integer: t.isIntro ? 1 : 0)
    }

    /// The receipt payload (DER): the attributes of the family's receipt created at `token.createdAt`,
    /// padded to at least `minimumLength` bytes and then by 4 bytes per reissue (`issueSequence`).
    func payload(_ family: ReceiptFamily, token: ReceiptToken, minimumLength: Int) -> [UInt8] {
        let opaque = AppReceiptReader.opaque(token)
        let bundle = BERNode.utf8(family.bundleId).der
        var deviceHasher = SHA256()
        withUnsafeBytes(of: SeededRandom.hash(seed, 0xDE71CE, UInt64(family.index)).bigEndian) {
            deviceHasher.update(bufferPointer: $0)
        }
        var sha1 = Insecure.SHA1()
        sha1.update(data: Array(deviceHasher.finalize().prefix(16)))
        sha1.update(data: opaque)
        sha1.update(data: bundle)
        var attributes = ReceiptAttributeSet(capacity: max(minimumLength, 1024) + 64)
        attributes.add(0, utf8: family.sandbox ? "ProductionSandbox" : "Production")
        attributes.add(1, integer: family.sandbox ? 0 : Int64(seed % 100_000_000 + 1_400_000_000))
        attributes.add(2, octets: bundle)
        attributes.add(3, utf8: "412")
        attributes.add(4, octets: opaque)
        attributes.add(5, octets: Array(sha1.finalize()))
        attributes.add(12, date: token.createdAt)
        attributes.add(18, date: family.appDownloadedAt)
        attributes.add(19, utf8: family.sandbox ? "1.0" : "301")
        var record = ReceiptAttributeSet(capacity: 512)
        for plan in family.subscriptions {
            for t in plan.timeline(at: token.createdAt).transactions {
                Self.inAppRecord(t, into: &record)
                attributes.add(17, set: record)
            }
        }
        // Padding: up to `minimumLength`, plus 4 bytes per reissue, so every reissued receipt is longer.
        let missing = max(0, minimumLength - attributes.encodedCount) + 4 * Int(token.issueSequence)
        if missing > 0 {
            var rng = SeededRandom(
                seed,
                0xBAD,
                UInt64(family.index),
                UInt64(bitPattern: token.createdAt),
                UInt64(token.issueSequence)
            )
            attributes.add(Self.paddingType, valueLength: missing) { out in
                var remaining = missing
                while remaining > 0 {
                    withUnsafeBytes(of: rng.next()) { out += $0.prefix(remaining) }
                    remaining -= min(8, remaining)
                }
            }
        }
        return attributes.encoded
    }

    /// The whole receipt (PKCS#7 bytes, before base64).
    func receipt(_ family: ReceiptFamily, token: ReceiptToken, minimumLength: Int, indefinite: Bool) -> [UInt8] {
        let payload = payload(family, token: token, minimumLength: minimumLength)
        // Ed25519 over the content itself (no signed attributes); signing 32-byte-keyed bytes cannot fail.
        let signature = try! key.signature(for: payload)
        let content: BERNode =
            indefinite
            ? .constructed(
                tag: 0x24,
                stride(from: 0, to: payload.count, by: Self.segmentLength).map {
                    .octets(Array(payload[$0..<min($0 + Self.segmentLength, payload.count)]))
                }
            )
            : .octets(payload)
        let signerInfo = BERNode.sequence([
            .integer(1),
            issuerAndSerial,
            .sequence([.oid(Self.sha512OID)]),
            .sequence([.oid(Self.ed25519OID)]),
            .octets(Array(signature)),
        ])
        let signedData = BERNode.sequence([
            .integer(1),
            .set([.sequence([.oid(Self.sha512OID)])]),
            .sequence([.oid(Self.dataOID), .context(0, [content])]),
            .context(0, [.encoded(certificate)]),
            .set([signerInfo]),
        ])
        let contentInfo = BERNode.sequence([.oid(Self.signedDataOID), .context(0, [signedData])])
        return indefinite ? contentInfo.indefinite : contentInfo.der
    }
}
