import AppStoreSignedData
import Crypto
import Foundation
import SignedDataTestSupport
import Testing
import X509

/// JWS verification against a PKI made at test time: the good path, and each refusal by its name.
@Suite struct JWSVerificationTests {
    static let pki = try! TestPKI()

    private func verifier(
        _ pki: TestPKI = Self.pki,
        bundleId: String? = TestPayloads.bundleId,
        environment: AppStoreEnvironment? = .production,
        validationTime: SignedDataVerifier.ValidationTime = .signedDate
    ) -> SignedDataVerifier {
        SignedDataVerifier(
            roots: TrustedRoots([pki.root]),
            options: .init(bundleId: bundleId, environment: environment, validationTime: validationTime)
        )
    }

    private func refusal(_ jws: String, by verifier: SignedDataVerifier) -> SignedDataError? {
        do {
            _ = try verifier.verifyTransaction(jws)
            return nil
        } catch {
            return error
        }
    }

    @Test func aGoodTransactionVerifiesAndDecodes() throws {
        let jws = Self.pki.jws(payload: TestPayloads.transaction())
        let transaction = try verifier().verifyTransaction(jws)
        #expect(transaction.transactionId == "2000000811111203")
        #expect(transaction.originalTransactionId == "2000000811111111")
        #expect(transaction.bundleId == TestPayloads.bundleId)
        #expect(transaction.price == 4990)
        #expect(transaction.currency == "USD")
        #expect(transaction.expiresDate == Date(timeIntervalSince1970: 1_797_592_000))
        #expect(transaction.signedDate == Date(timeIntervalSince1970: 1_795_230_000))
        let verified = try verifier().verify(jws)
        #expect(
            verified.certificateNames == [
                "Test App Store Receipt Signing", "Test Worldwide Developer Relations CA", "Test Root CA",
            ]
        )
    }

    @Test func renewalInfoAndNotificationsVerifyWithTheirNestedPayloads() throws {
        let transaction = Self.pki.jws(payload: TestPayloads.transaction())
        let renewal = Self.pki.jws(payload: TestPayloads.renewalInfo(autoRenewStatus: 0))
        let notification = Self.pki.jws(
            payload: TestPayloads.notification(signedTransaction: transaction, signedRenewal: renewal)
        )
        let v = verifier()
        let decoded = try v.verifyNotification(notification)
        #expect(decoded.notificationType == "DID_RENEW")
        #expect(decoded.data?.appAppleId == 1_234_567_890)
        let nested = try v.verifyTransaction(try #require(decoded.data?.signedTransactionInfo))
        #expect(nested.transactionId == "2000000811111203")
        let info = try v.verifyRenewalInfo(try #require(decoded.data?.signedRenewalInfo))
        #expect(info.autoRenewStatus == 0)
        #expect(info.renewalPrice == 4990)
    }

    @Test func aTamperedPayloadIsABadSignature() throws {
        let jws = Self.pki.jws(payload: TestPayloads.transaction())
        let parts = jws.split(separator: ".").map(String.init)
        let forged = TestPKI.base64URL(Array(TestPayloads.transaction(expiresMs: 4_000_000_000_000).utf8))
        let tampered = [parts[0], forged, parts[2]].joined(separator: ".")
        #expect(refusal(tampered, by: verifier())?.code == .badSignature)
    }

    @Test func aTamperedSignatureIsABadSignature() throws {
        let jws = Self.pki.jws(payload: TestPayloads.transaction())
        var parts = jws.split(separator: ".").map(String.init)
        var signature = try #require(Base64URL.decode(Substring(parts[2])))
        signature[10] ^= 0x01
        parts[2] = TestPKI.base64URL(signature)
        #expect(refusal(parts.joined(separator: "."), by: verifier())?.code == .badSignature)
        // Another key's signature over the same bytes, and a truncated one.
        let otherKey = Self.pki.jws(payload: TestPayloads.transaction(), signingKey: P256.Signing.PrivateKey())
        #expect(refusal(otherKey, by: verifier())?.code == .badSignature)
        parts[2] = TestPKI.base64URL(Array(signature.prefix(63)))
        #expect(refusal(parts.joined(separator: "."), by: verifier())?.code == .badSignature)
    }

    @Test func algNoneIsTheWrongAlgorithm() {
        let jws = Self.pki.jws(payload: TestPayloads.transaction(), alg: "none")
        #expect(refusal(jws, by: verifier())?.code == .wrongAlgorithm)
    }

    @Test func hs256WithTheLeafsPublicKeyAsTheSecretIsTheWrongAlgorithm() {
        let secret = Array(Self.pki.leafKey.publicKey.derRepresentation)
        let jws = Self.pki.jws(payload: TestPayloads.transaction(), alg: "HS256", hmacSecret: secret)
        let error = refusal(jws, by: verifier())
        #expect(error?.code == .wrongAlgorithm)
        #expect(error?.detail.contains("HS256") == true)
        for alg in ["RS256", "ES384", "es256"] {
            #expect(
                refusal(Self.pki.jws(payload: TestPayloads.transaction(), alg: alg), by: verifier())?.code
                    == .wrongAlgorithm
            )
        }
    }

    @Test func twoOrFourCertificatesInX5cAreAnInvalidChain() {
        let x5c = Self.pki.x5c
        for chain in [Array(x5c.prefix(2)), x5c + [x5c[2]], [x5c[0]], []] {
            let jws = Self.pki.jws(payload: TestPayloads.transaction(), x5c: chain)
            let error = refusal(jws, by: verifier())
            #expect(error?.code == .chainInvalid, "x5c of \(chain.count): \(String(describing: error))")
        }
    }

    @Test func aRootOutsideTheTrustedSetIsAnInvalidChain() throws {
        let stranger = try TestPKI()
        let jws = stranger.jws(payload: TestPayloads.transaction())
        #expect(refusal(jws, by: verifier())?.code == .chainInvalid)
        // Nor is Apple's root alone enough for a test chain.
        let appleOnly = SignedDataVerifier(options: .init(bundleId: TestPayloads.bundleId))
        #expect(refusal(Self.pki.jws(payload: TestPayloads.transaction()), by: appleOnly)?.code == .chainInvalid)
        // A chain whose x5c[2] names the trusted root but whose intermediate another root signed.
        var mixed = stranger.x5c
        mixed[2] = Self.pki.x5c[2]
        #expect(
            refusal(stranger.jws(payload: TestPayloads.transaction(), x5c: mixed), by: verifier())?.code
                == .chainInvalid
        )
    }

    @Test func aLeafWithoutTheAppleOIDIsRefused() throws {
        var options = TestPKI.Options()
        options.leafHasAppleOID = false
        let pki = try TestPKI(options)
        let error = refusal(pki.jws(payload: TestPayloads.transaction()), by: verifier(pki))
        #expect(error?.code == .missingAppleOID)
        #expect(error?.detail.contains("1.2.840.113635.100.6.11.1") == true)
    }

    @Test func anIntermediateWithoutTheAppleOIDIsRefused() throws {
        var options = TestPKI.Options()
        options.intermediateHasAppleOID = false
        let pki = try TestPKI(options)
        let error = refusal(pki.jws(payload: TestPayloads.transaction()), by: verifier(pki))
        #expect(error?.code == .missingAppleOID)
        #expect(error?.detail.contains("1.2.840.113635.100.6.2.1") == true)
    }

    @Test func aLeafExpiredAtSignedDateIsRefusedButVerifiesBeforeIt() throws {
        var options = TestPKI.Options()
        options.leafNotAfter = Date(timeIntervalSince1970: 1_790_000_000)  // before signedDate (1_795_230_000)
        let pki = try TestPKI(options)
        let v = verifier(pki)
        #expect(refusal(pki.jws(payload: TestPayloads.transaction()), by: v)?.code == .certificateExpiredAtSignedDate)
        // The same chain signed something earlier, while valid: that verifies, and the chain is now cached ...
        let earlier = pki.jws(payload: TestPayloads.transaction(signedDateMs: 1_780_000_000_000))
        #expect(refusal(earlier, by: v) == nil)
        // ... and the cached chain is still checked at each payload's own signedDate.
        #expect(refusal(pki.jws(payload: TestPayloads.transaction()), by: v)?.code == .certificateExpiredAtSignedDate)
        // Checking "as of now" refuses the earlier payload too.
        #expect(
            refusal(earlier, by: verifier(pki, validationTime: .fixed(Date(timeIntervalSince1970: 1_800_000_000))))?
                .code == .certificateExpiredAtSignedDate
        )
    }

    @Test func aLeafNotYetValidAtSignedDateIsRefused() throws {
        var options = TestPKI.Options()
        options.leafNotBefore = Date(timeIntervalSince1970: 1_799_000_000)  // after signedDate
        let pki = try TestPKI(options)
        let error = refusal(pki.jws(payload: TestPayloads.transaction()), by: verifier(pki))
        #expect(error?.code == .certificateNotYetValidAtSignedDate)
    }

    @Test func theWrongBundleIdIsABundleMismatch() {
        let jws = Self.pki.jws(payload: TestPayloads.transaction(bundleId: "com.example.other"))
        let error = refusal(jws, by: verifier())
        #expect(error?.code == .bundleMismatch)
        #expect(error?.detail.contains("com.example.other") == true)
        // Not configured: not checked.
        #expect(refusal(jws, by: verifier(bundleId: nil)) == nil)
    }

    @Test func theWrongEnvironmentIsAnEnvironmentMismatch() throws {
        let jws = Self.pki.jws(payload: TestPayloads.transaction(environment: "Sandbox"))
        #expect(refusal(jws, by: verifier())?.code == .environmentMismatch)
        #expect(refusal(jws, by: verifier(environment: .sandbox)) == nil)
        let renewal = Self.pki.jws(payload: TestPayloads.renewalInfo(environment: "Sandbox"))
        #expect(throws: SignedDataError.self) { try verifier().verifyRenewalInfo(renewal) }
    }

    @Test func aProductionNotificationForAnotherAppAppleIdIsRefused() throws {
        let notification = Self.pki.jws(
            payload: TestPayloads.notification(signedTransaction: nil, signedRenewal: nil, appAppleId: 99)
        )
        let v = SignedDataVerifier(
            roots: TrustedRoots([Self.pki.root]),
            options: .init(bundleId: TestPayloads.bundleId, appAppleId: 1_234_567_890)
        )
        do {
            _ = try v.verifyNotification(notification)
            Issue.record("verified")
        } catch {
            #expect(error.code == .appAppleIdMismatch)
        }
    }

    @Test func malformedInputsAreNamedNeverACrash() {
        let good = Self.pki.jws(payload: TestPayloads.transaction())
        let parts = good.split(separator: ".").map(String.init)
        let cases: [String] = [
            "", "abc", "a.b", "a.b.c.d", "!!!.\(parts[1]).\(parts[2])", "\(parts[0]).%%%.\(parts[2])",
            "\(TestPKI.base64URL(Array("not json".utf8))).\(parts[1]).\(parts[2])",
            "\(parts[0]).\(TestPKI.base64URL(Array("[1,2]".utf8))).\(parts[2])",
            "\(parts[0]).\(TestPKI.base64URL(Array(#"{"signedDate":"yesterday"}"#.utf8))).\(parts[2])",
        ]
        for text in cases {
            let error = refusal(text, by: verifier())
            #expect(error?.code == .malformed, "\(text.prefix(40)): \(String(describing: error))")
        }
        // A well-signed payload with a field of the wrong type is malformed too (after the signature).
        let wrongType = Self.pki.jws(payload: TestPayloads.transaction(extra: [#""revocationDate":"yesterday""#]))
        #expect(refusal(wrongType, by: verifier())?.code == .malformed)
    }

    @Test func theCacheVerifiesAChainOnceForManyPayloads() throws {
        let pki = try TestPKI()
        let cache = ChainCache(capacity: 4)
        let v = SignedDataVerifier(
            roots: TrustedRoots([pki.root]),
            options: .init(bundleId: TestPayloads.bundleId),
            cache: cache
        )
        for index in 0..<50 {
            let jws = pki.jws(payload: TestPayloads.transaction(transactionId: "20000008111\(index)"))
            _ = try v.verifyTransaction(jws)
        }
        #expect(cache.statistics.misses == 1)
        #expect(cache.statistics.hits == 49)
        // Bounded: five different chains through a cache of four keep four.
        for _ in 0..<5 {
            let other = try TestPKI()
            let v2 = SignedDataVerifier(roots: TrustedRoots([other.root]), cache: cache)
            _ = try v2.verify(other.jws(payload: TestPayloads.transaction()))
        }
        #expect(cache.count == 4)
    }

    @Test func rootFilesAreReadAsPEMOrDER() throws {
        let pem = Self.pki.rootPEM + "\n" + (try TestPKI()).rootPEM
        #expect(try TrustedRoots.parseCertificates(Array(pem.utf8)).count == 2)
        #expect(try TrustedRoots.parseCertificates(TestPKI.der(Self.pki.root)) == [Self.pki.root])
        #expect(throws: RootCertificateError.self) { try TrustedRoots.parseCertificates(Array("hello".utf8)) }
        let roots = TrustedRoots.apple.adding([Self.pki.root])
        #expect(roots.certificates.count == 2)
        #expect(refusal(Self.pki.jws(payload: TestPayloads.transaction()), by: SignedDataVerifier(roots: roots)) == nil)
    }
}
