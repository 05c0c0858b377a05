import Crypto
import Foundation
import SwiftASN1

/// The In-App Purchase key App Store Connect issues (`AuthKey_XXXXXXXXXX.p8`): PKCS#8 PEM holding an
/// EC P-256 private key. Its `description` never shows the key.
public struct APIPrivateKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    let key: P256.Signing.PrivateKey

    public init(_ key: P256.Signing.PrivateKey) {
        self.key = key
    }

    /// Reads a `.p8` file's text. Anything but a PKCS#8 EC P-256 key is refused with a message naming what
    /// was found (an RSA key, another curve, a certificate, not PEM), never the key material.
    public init(pem text: String) throws(APIKeyError) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.hasPrefix("-----BEGIN ") else {
            throw APIKeyError(
                "not a PEM file (expected -----BEGIN PRIVATE KEY-----, the .p8 file App Store Connect issues)"
            )
        }
        let label = trimmed.dropFirst("-----BEGIN ".count).prefix { $0 != "-" }
        guard label == "PRIVATE KEY" else {
            throw APIKeyError(
                "a PEM \(label.prefix(40)) block, not a PKCS#8 PRIVATE KEY (the .p8 file App Store Connect issues)"
            )
        }
        let document: PEMDocument
        do {
            document = try PEMDocument(pemString: trimmed)
        } catch {
            throw APIKeyError("the PEM PRIVATE KEY block does not decode")
        }
        let algorithm = Self.describeAlgorithm(pkcs8: document.derBytes)
        guard algorithm != "unreadable" else {
            throw APIKeyError("the PEM PRIVATE KEY block does not hold a PKCS#8 key")
        }
        guard algorithm == "EC P-256" else {
            throw APIKeyError("a PKCS#8 \(algorithm) key, not an EC P-256 key (App Store Server API tokens are ES256)")
        }
        do {
            key = try P256.Signing.PrivateKey(derRepresentation: document.derBytes)
        } catch {
            throw APIKeyError("the PKCS#8 EC P-256 key does not decode")
        }
    }

    /// The public half (to check tokens, and to tell the key's identity without showing the key).
    public var publicKey: P256.Signing.PublicKey { key.publicKey }

    public var description: String { "<redacted P-256 private key>" }
    public var debugDescription: String { description }

    /// `EC P-256`, `EC secp384r1`, `RSA`, `Ed25519`, ... read from the PKCS#8 AlgorithmIdentifier.
    static func describeAlgorithm(pkcs8 der: [UInt8]) -> String {
        guard let root = try? DER.parse(der), case .constructed(let top) = root.content else { return "unreadable" }
        var items = top.makeIterator()
        guard items.next() != nil, let algorithm = items.next(), case .constructed(let fields) = algorithm.content
        else {
            return "unreadable"
        }
        var parts = fields.makeIterator()
        guard let oidNode = parts.next(), let oid = try? ASN1ObjectIdentifier(derEncoded: oidNode) else {
            return "unreadable"
        }
        switch oid.description {
        case "1.2.840.10045.2.1":
            guard let curveNode = parts.next(), let curve = try? ASN1ObjectIdentifier(derEncoded: curveNode) else {
                return "EC (unnamed curve)"
            }
            switch curve.description {
            case "1.2.840.10045.3.1.7": return "EC P-256"
            case "1.3.132.0.34": return "EC P-384"
            case "1.3.132.0.35": return "EC P-521"
            case "1.3.132.0.10": return "EC secp256k1"
            default: return "EC (curve \(curve.description))"
            }
        case "1.2.840.113549.1.1.1", "1.2.840.113549.1.1.10": return "RSA"
        case "1.3.101.112": return "Ed25519"
        case "1.3.101.110": return "X25519"
        default: return "unknown-algorithm (\(oid.description))"
        }
    }
}
