import Crypto
import Foundation
import SwiftASN1
import X509

/// Certificates for a real HTTPS server on loopback, made at test time (docs/testing.md, "TLS"): a test
/// CA, a server certificate it signed for `localhost` and `127.0.0.1`, another it signed for a host the
/// tests never use (`elsewhere.invalid`: a hostname mismatch), and a self-signed one for `localhost`
/// (untrusted). `write(to:)` saves them as PEM files for the server and for `--ca-file`.
public struct TLSTestPKI: Sendable {
    /// The PEM files written by `write(to:)`.
    public struct Files: Sendable {
        /// The test CA's certificate: what `--ca-file` / `APPLE_CA_FILE` names.
        public var caCertificate: String
        /// Certificate and key of a server named `localhost` and `127.0.0.1`, signed by the CA.
        public var serverCertificate: String
        public var serverKey: String
        /// Certificate and key signed by the CA for `elsewhere.invalid` only.
        public var otherHostCertificate: String
        public var otherHostKey: String
        /// A self-signed certificate for `localhost` and its key.
        public var selfSignedCertificate: String
        public var selfSignedKey: String
    }

    public let caKey: P256.Signing.PrivateKey
    public let ca: Certificate
    public let serverKey: P256.Signing.PrivateKey
    public let server: Certificate
    public let otherHostKey: P256.Signing.PrivateKey
    public let otherHost: Certificate
    public let selfSignedKey: P256.Signing.PrivateKey
    public let selfSigned: Certificate

    public init() throws {
        let notBefore = Date().addingTimeInterval(-3_600)
        let notAfter = Date().addingTimeInterval(30 * 86_400)
        caKey = P256.Signing.PrivateKey()
        let caName = try DistinguishedName {
            CommonName("renewal-reconciler test CA")
            OrganizationName("renewal-reconciler tests")
        }
        ca = try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: .init(caKey.publicKey),
            notValidBefore: notBefore,
            notValidAfter: notAfter,
            issuer: caName,
            subject: caName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            },
            issuerPrivateKey: .init(caKey)
        )
        serverKey = P256.Signing.PrivateKey()
        server = try Self.leaf(
            key: serverKey,
            names: [.dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))],
            commonName: "localhost",
            issuer: caName,
            issuerKey: caKey,
            notBefore: notBefore,
            notAfter: notAfter
        )
        otherHostKey = P256.Signing.PrivateKey()
        otherHost = try Self.leaf(
            key: otherHostKey,
            names: [.dnsName("elsewhere.invalid")],
            commonName: "elsewhere.invalid",
            issuer: caName,
            issuerKey: caKey,
            notBefore: notBefore,
            notAfter: notAfter
        )
        selfSignedKey = P256.Signing.PrivateKey()
        let selfName = try DistinguishedName { CommonName("localhost") }
        selfSigned = try Self.leaf(
            key: selfSignedKey,
            names: [.dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))],
            commonName: "localhost",
            issuer: selfName,
            issuerKey: selfSignedKey,
            notBefore: notBefore,
            notAfter: notAfter
        )
    }

    /// Writes every certificate and key as PEM into `directory` (created if needed).
    public func write(to directory: String) throws -> Files {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        func save(_ name: String, _ text: String) throws -> String {
            let path = (directory as NSString).appendingPathComponent(name)
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
        return Files(
            caCertificate: try save("ca.pem", try ca.serializeAsPEM().pemString + "\n"),
            serverCertificate: try save("server.pem", try server.serializeAsPEM().pemString + "\n"),
            serverKey: try save("server.key", serverKey.pemRepresentation + "\n"),
            otherHostCertificate: try save("other-host.pem", try otherHost.serializeAsPEM().pemString + "\n"),
            otherHostKey: try save("other-host.key", otherHostKey.pemRepresentation + "\n"),
            selfSignedCertificate: try save("self-signed.pem", try selfSigned.serializeAsPEM().pemString + "\n"),
            selfSignedKey: try save("self-signed.key", selfSignedKey.pemRepresentation + "\n")
        )
    }

    private static func leaf(
        key: P256.Signing.PrivateKey,
        names: [GeneralName],
        commonName: String,
        issuer: DistinguishedName,
        issuerKey: P256.Signing.PrivateKey,
        notBefore: Date,
        notAfter: Date
    ) throws -> Certificate {
        let subject = try DistinguishedName { CommonName(commonName) }
        return try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: .init(key.publicKey),
            notValidBefore: notBefore,
            notValidAfter: notAfter,
            issuer: issuer,
            subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(names)
            },
            issuerPrivateKey: .init(issuerKey)
        )
    }
}
