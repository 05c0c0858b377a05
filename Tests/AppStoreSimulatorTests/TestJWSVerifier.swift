import Crypto
import Foundation
import SwiftASN1
@_spi(FixedExpiryValidationTime) import X509

/// The test client's own JWS verification (not the reconciler's): a compact ES256 JWS whose `x5c` chain
/// (leaf, intermediate, root) verifies to the exported `root.pem` at `signedDate`, with Apple's OIDs on
/// the intermediate and the leaf, and an r||s signature by the leaf's key.
struct TestJWSVerifier: Sendable {
    struct Refusal: Error, CustomStringConvertible {
        var description: String
        init(_ d: String) { description = d }
    }

    static let intermediateOID: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 2, 1]
    static let leafOID: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 11, 1]

    let root: Certificate
    /// Chains already verified: (header segment, signedDate) to the leaf's key, as Apple's libraries cache
    /// verified chains; the signature is still checked for every JWS.
    private let verified = ChainCache()

    final class ChainCache: @unchecked Sendable {
        private let lock = NSLock()
        private var keys: [String: P256.Signing.PublicKey] = [:]
        func get(_ k: String) -> P256.Signing.PublicKey? { lock.withLock { keys[k] } }
        func set(_ k: String, _ v: P256.Signing.PublicKey) { lock.withLock { keys[k] = v } }
    }

    init(rootPEM: String) throws {
        root = try Certificate(pemEncoded: rootPEM)
    }

    /// The verified payload as a JSON object.
    func verify(_ jws: String) async throws -> [String: Any] {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Self.base64URL(parts[0]), let payload = Self.base64URL(parts[1]),
            let signatureBytes = Self.base64URL(parts[2])
        else { throw Refusal("not a compact JWS") }
        guard let object = try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any] else {
            throw Refusal("payload is not a JSON object")
        }
        let signedMs = (object["signedDate"] as? NSNumber)?.int64Value ?? Int64(Date().timeIntervalSince1970 * 1000)
        let cacheKey = String(parts[0]) + "@" + String(signedMs)
        if let key = verified.get(cacheKey) {
            guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
                key.isValidSignature(signature, for: Array((parts[0] + "." + parts[1]).utf8))
            else { throw Refusal("bad signature") }
            return object
        }
        guard let header = try JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any],
            header["alg"] as? String == "ES256", let x5c = header["x5c"] as? [String], x5c.count == 3
        else { throw Refusal("header is not ES256 with three x5c certificates") }
        let chain = try x5c.map { text -> Certificate in
            guard let der = Data(base64Encoded: text) else { throw Refusal("x5c entry is not base64") }
            return try Certificate(derEncoded: Array(der))
        }
        guard chain[0].extensions.contains(where: { $0.oid == Self.leafOID }) else {
            throw Refusal("leaf without 1.2.840.113635.100.6.11.1")
        }
        guard chain[1].extensions.contains(where: { $0.oid == Self.intermediateOID }) else {
            throw Refusal("intermediate without 1.2.840.113635.100.6.2.1")
        }
        let time = Date(timeIntervalSince1970: Double(signedMs) / 1000)
        var verifier = Verifier(rootCertificates: CertificateStore([root])) {
            RFC5280Policy(fixedExpiryValidationTime: time)
        }
        let result = await verifier.validate(leaf: chain[0], intermediates: CertificateStore([chain[1]]))
        guard case .validCertificate(let path) = result, path.count == 3 else {
            throw Refusal("chain does not verify to root.pem at signedDate")
        }
        guard let key = P256.Signing.PublicKey(chain[0].publicKey),
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
            key.isValidSignature(signature, for: Array((parts[0] + "." + parts[1]).utf8))
        else { throw Refusal("bad signature") }
        verified.set(cacheKey, key)
        return object
    }

    static func base64URL(_ text: Substring) -> [UInt8]? {
        var s = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while s.count % 4 != 0 { s += "=" }
        return Data(base64Encoded: s).map(Array.init)
    }
}
