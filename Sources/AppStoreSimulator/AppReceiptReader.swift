import Crypto

/// Finds which receipt a stored app receipt is (docs/simulator.md, "Stored receipts") with the simulator's
/// own BER reader: walks ContentInfo, SignedData and the encapsulated content (definite or indefinite
/// lengths, the content primitive or in segments), checks the first signer's Ed25519 signature over the
/// content with the simulator's key, and reads the token from the opaque value (attribute type 4).
///
/// Not PKCS#7 in the expected shape: malformed (21002). A signature that does not match (tampered, or
/// another seed's key) or no readable opaque value: unauthenticated (21003).
struct AppReceiptReader: Sendable {
    let publicKey: Curve25519.Signing.PublicKey
    /// The same seed's signing key, for the cheap check of receipts the simulator signed (`isAuthentic`).
    let signingKey: Curve25519.Signing.PrivateKey

    init(seed: UInt64) {
        signingKey = AppReceiptEncoder.signingKey(seed: seed)
        publicKey = signingKey.publicKey
    }

    /// Whether `signature` is a valid Ed25519 signature of `payload` by the simulator's key.
    ///
    /// Ed25519 signing is deterministic here (RFC 8032: the nonce is a hash of the key and the message), so a
    /// receipt the simulator signed (every stored receipt and every `latest_receipt`) carries exactly the
    /// signature that signing its content again gives, and a signature equal to that one is valid. Signing is
    /// a fixed-base scalar multiplication, about a fifth of BoringSSL's verification (a double-base one with
    /// a variable point), which was the largest single cost of a verifyReceipt with a distinct receipt. Any
    /// other signature (tampered content, another key's, or one of this key made with another nonce) is
    /// still verified in full, so the answer is the same as verifying every time.
    func isAuthentic(signature: [UInt8], payload: [UInt8]) -> Bool {
        if signature.count == 64, let resigned = try? signingKey.signature(for: payload),
            resigned.elementsEqual(signature)
        {
            return true
        }
        return publicKey.isValidSignature(signature, for: payload)
    }

    static let signedDataOID = BERNode.oid(AppReceiptEncoder.signedDataOID).der
    static let dataOID = BERNode.oid(AppReceiptEncoder.dataOID).der
    static let opaqueLength = 28

    /// The opaque value: `S`, `I`, version 1, environment, family index (u32), original_transaction_id (u64),
    /// creation ms (i64), issue sequence (u32), little-endian.
    static func opaque(_ token: ReceiptToken) -> [UInt8] {
        var out: [UInt8] = [0x53, 0x49, 1, token.sandbox ? 1 : 0]
        withUnsafeBytes(of: token.familyIndex.littleEndian) { out += $0 }
        withUnsafeBytes(of: token.originalTransactionId.littleEndian) { out += $0 }
        withUnsafeBytes(of: token.createdAt.littleEndian) { out += $0 }
        withUnsafeBytes(of: token.issueSequence.littleEndian) { out += $0 }
        return out
    }

    static func token(opaque bytes: ArraySlice<UInt8>) -> ReceiptToken? {
        let b = Array(bytes)
        guard b.count == opaqueLength, b[0] == 0x53, b[1] == 0x49, b[2] == 1 else { return nil }
        func load<T: FixedWidthInteger>(_ offset: Int, _: T.Type) -> T {
            b.withUnsafeBytes { T(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: T.self)) }
        }
        return ReceiptToken(
            familyIndex: load(4, UInt32.self),
            originalTransactionId: load(8, UInt64.self),
            sandbox: b[3] == 1,
            createdAt: load(16, Int64.self),
            issueSequence: load(24, UInt32.self)
        )
    }

    /// Decodes the receipt's bytes (base64 already removed).
    func decode(_ bytes: [UInt8]) -> ReceiptCodec.Decoded {
        let r = BERReader(bytes)
        // ContentInfo ::= SEQUENCE { contentType OID, content [0] EXPLICIT SignedData }
        guard let root = r.element(at: 0, limit: bytes.count), root.tag == 0x30, root.end == bytes.count,
            let info = r.members(root), info.count == 2, info[0].tag == 0x06,
            r.content(info[0]).elementsEqual(Self.signedDataOID.dropFirst(2)),
            info[1].tag == 0xA0, let signedData = r.member(info[1], 0, tag: 0x30),
            let fields = r.members(signedData), fields.count >= 4, fields[2].tag == 0x30,
            let encap = r.members(fields[2]), encap.count == 2, encap[0].tag == 0x06,
            r.content(encap[0]).elementsEqual(Self.dataOID.dropFirst(2)), encap[1].tag == 0xA0,
            let eContent = r.members(encap[1])?.first, let payload = r.octets(eContent),
            let signerInfos = fields.last, signerInfos.tag == 0x31,
            let signer = r.members(signerInfos)?.first, signer.tag == 0x30,
            let signature = r.members(signer)?.last, let signatureBytes = r.octets(signature)
        else { return .malformed }
        guard isAuthentic(signature: signatureBytes, payload: payload) else { return .unauthenticated }
        let p = BERReader(payload)
        guard let set = p.element(at: 0, limit: payload.count), set.tag == 0x31, let attributes = p.members(set)
        else { return .malformed }
        for attribute in attributes {
            guard let parts = p.members(attribute), parts.count == 3, p.integer(parts[0]) == 4 else { continue }
            guard parts[2].tag == 0x04, let token = Self.token(opaque: p.content(parts[2])) else {
                return .unauthenticated
            }
            return .valid(token)
        }
        return .unauthenticated
    }
}
