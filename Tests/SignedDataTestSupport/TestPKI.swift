import Crypto
import Foundation
import SwiftASN1
import X509

/// A certificate hierarchy made at test time, shaped like Apple's: a self-signed root, an intermediate
/// carrying the WWDR OID (1.2.840.113635.100.6.2.1) and a leaf carrying the receipt-signing OID
/// (1.2.840.113635.100.6.11.1), all EC P-256. Each knob breaks one property for a refusal test.
public struct TestPKI: Sendable {
    public struct Options: Sendable {
        public var rootName = "Test Root CA"
        public var intermediateHasAppleOID = true
        public var leafHasAppleOID = true
        public var notBefore = Date(timeIntervalSince1970: 1_600_000_000)  // 2020-09-13
        public var notAfter = Date(timeIntervalSince1970: 2_000_000_000)  // 2033-05-18
        public var leafNotBefore: Date?
        public var leafNotAfter: Date?
        public init() {}
    }

    public static let intermediateOID: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 2, 1]
    public static let leafOID: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 11, 1]

    public let rootKey: P256.Signing.PrivateKey
    public let intermediateKey: P256.Signing.PrivateKey
    public let leafKey: P256.Signing.PrivateKey
    public let root: Certificate
    public let intermediate: Certificate
    public let leaf: Certificate

    public init(_ options: Options = Options()) throws {
        rootKey = P256.Signing.PrivateKey()
        intermediateKey = P256.Signing.PrivateKey()
        leafKey = P256.Signing.PrivateKey()
        let rootName = try DistinguishedName {
            CommonName(options.rootName)
            OrganizationName("renewal-reconciler tests")
            CountryName("US")
        }
        let intermediateName = try DistinguishedName {
            CommonName("Test Worldwide Developer Relations CA")
            OrganizationName("renewal-reconciler tests")
        }
        let leafName = try DistinguishedName {
            CommonName("Test App Store Receipt Signing")
            OrganizationName("renewal-reconciler tests")
        }
        root = try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: .init(rootKey.publicKey),
            notValidBefore: options.notBefore,
            notValidAfter: options.notAfter,
            issuer: rootName,
            subject: rootName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            },
            issuerPrivateKey: .init(rootKey)
        )
        var intermediateExtensions = try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
            Critical(KeyUsage(keyCertSign: true, cRLSign: true))
        }
        if options.intermediateHasAppleOID {
            try intermediateExtensions.append(
                Certificate.Extension(oid: Self.intermediateOID, critical: false, value: [0x05, 0x00])
            )
        }
        intermediate = try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: .init(intermediateKey.publicKey),
            notValidBefore: options.notBefore,
            notValidAfter: options.notAfter,
            issuer: rootName,
            subject: intermediateName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: intermediateExtensions,
            issuerPrivateKey: .init(rootKey)
        )
        var leafExtensions = try Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            Critical(KeyUsage(digitalSignature: true))
        }
        if options.leafHasAppleOID {
            try leafExtensions.append(Certificate.Extension(oid: Self.leafOID, critical: false, value: [0x05, 0x00]))
        }
        leaf = try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: .init(leafKey.publicKey),
            notValidBefore: options.leafNotBefore ?? options.notBefore,
            notValidAfter: options.leafNotAfter ?? options.notAfter,
            issuer: intermediateName,
            subject: leafName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: leafExtensions,
            issuerPrivateKey: .init(intermediateKey)
        )
    }

    /// DER of a certificate.
    public static func der(_ certificate: Certificate) -> [UInt8] {
        var serializer = DER.Serializer()
        // Serializing a certificate that was just built or parsed cannot fail.
        try! serializer.serialize(certificate)
        return serializer.serializedBytes
    }

    /// The root as PEM text (what `--root-ca` / `APPLE_ROOT_CA_FILE` read).
    public var rootPEM: String {
        // A parsed certificate always serializes.
        try! root.serializeAsPEM().pemString
    }

    /// x5c as the App Store writes it: leaf, intermediate, root, plain base64 DER.
    public var x5c: [String] {
        [leaf, intermediate, root].map { Data(Self.der($0)).base64EncodedString() }
    }

    /// Signs `payload` (JSON text) as a compact JWS with this chain. `alg`, `x5c` and the signing key can be
    /// overridden to build refusals; `hmacSecret` signs HS256 instead (algorithm confusion).
    public func jws(
        payload: String,
        alg: String = "ES256",
        x5c: [String]? = nil,
        signingKey: P256.Signing.PrivateKey? = nil,
        hmacSecret: [UInt8]? = nil
    ) -> String {
        let chain = (x5c ?? self.x5c).map { "\"\($0)\"" }.joined(separator: ",")
        let header = #"{"alg":"\#(alg)","x5c":[\#(chain)]}"#
        let input = Self.base64URL(Array(header.utf8)) + "." + Self.base64URL(Array(payload.utf8))
        let signature: [UInt8]
        if let hmacSecret {
            let mac = HMAC<SHA256>.authenticationCode(for: Data(input.utf8), using: SymmetricKey(data: hmacSecret))
            signature = Array(mac)
        } else if alg == "none" {
            signature = []
        } else {
            // Signing in-memory data with a fresh P-256 key cannot fail.
            signature = Array(try! (signingKey ?? leafKey).signature(for: Data(input.utf8)).rawRepresentation)
        }
        return input + "." + Self.base64URL(signature)
    }

    public static func base64URL(_ bytes: [UInt8]) -> String {
        let standard = Data(bytes).base64EncodedString().utf8.compactMap { byte -> UInt8? in
            switch byte {
            case UInt8(ascii: "+"): UInt8(ascii: "-")
            case UInt8(ascii: "/"): UInt8(ascii: "_")
            case UInt8(ascii: "="): nil
            default: byte
            }
        }
        return String(decoding: standard, as: UTF8.self)
    }
}
