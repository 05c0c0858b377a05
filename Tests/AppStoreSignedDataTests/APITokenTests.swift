import AppStoreSignedData
import Crypto
import Foundation
import Synchronization
import Testing

/// App Store Server API tokens: ES256, the documented header and claims, verifiable with the public key,
/// reused until shortly before expiry; keys of the wrong kind refused without printing them.
@Suite struct APITokenTests {
    private func json(_ part: Substring) throws -> [String: Any] {
        let bytes = try #require(Base64URL.decode(part))
        return try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    @Test func aTokenCarriesTheClaimsAndVerifiesWithThePublicKey() throws {
        let privateKey = P256.Signing.PrivateKey()
        let key = try APIPrivateKey(pem: privateKey.pemRepresentation)
        let now = Date(timeIntervalSince1970: 1_795_230_000.7)
        let signer = try APITokenSigner(
            key: key,
            keyId: "ABC123DEFG",
            issuerId: "57246542-96fe-1a63-e053-0824d011072a",
            scope: .appStoreServer(bundleId: "com.example.reader"),
            clock: { now }
        )
        let token = signer.token()
        let parts = token.value.split(separator: ".")
        #expect(parts.count == 3)
        let header = try json(parts[0])
        #expect(header["alg"] as? String == "ES256")
        #expect(header["kid"] as? String == "ABC123DEFG")
        #expect(header["typ"] as? String == "JWT")
        let claims = try json(parts[1])
        #expect(claims["iss"] as? String == "57246542-96fe-1a63-e053-0824d011072a")
        #expect(claims["aud"] as? String == "appstoreconnect-v1")
        #expect(claims["bid"] as? String == "com.example.reader")
        let iat = try #require(claims["iat"] as? Int)
        let exp = try #require(claims["exp"] as? Int)
        #expect(iat == 1_795_230_000)
        #expect(exp - iat == 300)
        #expect(exp - iat <= 3600)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(Base64URL.decode(parts[2])))
        let signed = Data(token.value.split(separator: ".").prefix(2).joined(separator: ".").utf8)
        #expect(privateKey.publicKey.isValidSignature(signature, for: signed))
        #expect(!P256.Signing.PrivateKey().publicKey.isValidSignature(signature, for: signed))
        // The token is a secret: printing it shows only its expiry.
        #expect(!"\(token)".contains(parts[2]))
        #expect("\(key)" == "<redacted P-256 private key>")
    }

    @Test func tokensAreReusedUntilShortlyBeforeExpiry() throws {
        let clock = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
        let signer = try APITokenSigner(
            key: APIPrivateKey(P256.Signing.PrivateKey()),
            keyId: "K",
            issuerId: "I",
            scope: .appStoreServer(bundleId: "B"),
            lifetime: 600,
            renewalMargin: 60,
            clock: { clock.withLock { $0 } }
        )
        let first = signer.token()
        clock.withLock { $0 += 500 }
        #expect(signer.token().value == first.value)
        clock.withLock { $0 += 50 }  // 50 s left: under the margin
        let second = signer.token()
        #expect(second.value != first.value)
        #expect(second.expiresAt.timeIntervalSince(second.issuedAt) == 600)
        #expect(throws: APIKeyError.self) {
            try APITokenSigner(
                key: APIPrivateKey(P256.Signing.PrivateKey()),
                keyId: "K",
                issuerId: "I",
                scope: .appStoreServer(bundleId: "B"),
                lifetime: 3601
            )
        }
    }

    @Test func anAppStoreConnectTokenHasNoBundleIdAndLivesAtMostTwentyMinutes() throws {
        let privateKey = P256.Signing.PrivateKey()
        let now = Date(timeIntervalSince1970: 1_795_230_000)
        let signer = try APITokenSigner(
            key: APIPrivateKey(privateKey),
            keyId: "TEAMKEY123",
            issuerId: "57246542-96fe-1a63-e053-0824d011072a",
            scope: .appStoreConnect,
            lifetime: 1200,
            clock: { now }
        )
        let parts = signer.token().value.split(separator: ".")
        let claims = try json(parts[1])
        #expect(Set(claims.keys) == ["iss", "iat", "exp", "aud"])
        #expect(claims["aud"] as? String == "appstoreconnect-v1")
        #expect(try #require(claims["exp"] as? Int) - (try #require(claims["iat"] as? Int)) == 1200)
        #expect(try json(parts[0])["kid"] as? String == "TEAMKEY123")
        do {
            _ = try APITokenSigner(
                key: APIPrivateKey(privateKey),
                keyId: "K",
                issuerId: "I",
                scope: .appStoreConnect,
                lifetime: 1201
            )
            Issue.record("a 1,201 s App Store Connect token was accepted")
        } catch {
            #expect(error.message.contains("1...1200 s"), "\(error.message)")
        }
        // The Server API's longest lifetime stays an hour, and it needs a bundle id.
        #expect(throws: APIKeyError.self) {
            try APITokenSigner(
                key: APIPrivateKey(privateKey),
                keyId: "K",
                issuerId: "I",
                scope: .appStoreServer(bundleId: ""),
                lifetime: 3600
            )
        }
    }

    @Test func keysOfTheWrongKindAreRefusedWithoutPrintingThem() throws {
        let p384 = P384.Signing.PrivateKey().pemRepresentation
        let sec1 = P256.Signing.PrivateKey()
        let ecPrivateKeyPEM =
            "-----BEGIN EC PRIVATE KEY-----\n"
            + Data(sec1.x963Representation).base64EncodedString() + "\n-----END EC PRIVATE KEY-----\n"
        let cases: [(String, String)] = [
            (p384, "EC P-384"),
            (ecPrivateKeyPEM, "EC PRIVATE KEY"),
            ("just some text", "not a PEM"),
            ("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", "PRIVATE KEY"),
        ]
        for (pem, expected) in cases {
            do {
                _ = try APIPrivateKey(pem: pem)
                Issue.record("accepted \(expected)")
            } catch {
                #expect(error.message.contains(expected), "\(error.message)")
                let body = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
                if body.count > 8 { #expect(!error.message.contains(body.prefix(16)), "the message shows the key") }
            }
        }
    }
}
