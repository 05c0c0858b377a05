import AppStoreSignedData
import Crypto
import Foundation
import Testing
import X509

/// The compiled-in Apple Root CA - G3 is exactly Apple's published certificate, and a real App Store JWS
/// (a sandbox TEST notification, signed by Apple) verifies to it.
@Suite struct AppleRootTests {
    static let publishedFingerprint = "63343abfb89a6a03ebb57e9b3f5fa7be7c4f5c756f3017b3a8c488c3653e9179"

    private func fixture(_ name: String) throws -> String {
        let url = try #require(Bundle.module.url(forResource: "Fixtures", withExtension: nil))
        return try String(contentsOf: url.appendingPathComponent(name), encoding: .utf8)
    }

    @Test func theCompiledInRootIsApplesRootCAG3() throws {
        let digest = SHA256.hash(data: AppleRootCAG3.der).map { String(format: "%02x", $0) }.joined()
        #expect(digest == Self.publishedFingerprint)
        #expect(AppleRootCAG3.sha256Hex == Self.publishedFingerprint)
        let root = try Certificate(derEncoded: AppleRootCAG3.der)
        #expect(root.subject.description.contains("Apple Root CA - G3"))
        #expect(TrustedRoots.apple.certificates == [root])
        // Where the project's shared copy of Apple's file is present, the bytes are identical.
        let shared = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(
                "shared/apple/AppleRootCA-G3.cer"
            )
        if let published = FileManager.default.contents(atPath: shared.path) {
            #expect([UInt8](published) == AppleRootCAG3.der)
        }
    }

    @Test func aRealAppleSignedNotificationVerifiesToTheCompiledInRoot() throws {
        let jws = try fixture("apple_sandbox_test_notification.jws")
        let verifier = SignedDataVerifier(
            options: .init(bundleId: "com.loki-project.loki-messenger", environment: .sandbox)
        )
        let verified = try verifier.verify(jws)
        #expect(
            verified.certificateNames == [
                "Prod ECC Mac App Store and iTunes Store Receipt Signing",
                "Apple Worldwide Developer Relations Certification Authority", "Apple Root CA - G3",
            ]
        )
        let notification = try verifier.verifyNotification(jws)
        #expect(notification.notificationType == "TEST")
        #expect(notification.notificationUUID == "592751ef-c1b8-47fc-929e-d62dee66df4c")
        #expect(notification.signedDate == Date(timeIntervalSince1970: 1_757_035_472.686))
    }

    @Test func theRealNotificationIsRefusedWhereItMustBe() throws {
        let jws = try fixture("apple_sandbox_test_notification.jws")
        // Another app, or production only.
        let other = SignedDataVerifier(options: .init(bundleId: "com.example.reader"))
        #expect(
            throws: SignedDataError(
                .bundleMismatch,
                "the payload is for bundle com.loki-project.loki-messenger, expected com.example.reader"
            )
        ) {
            try other.verifyNotification(jws)
        }
        let production = SignedDataVerifier(options: .init(environment: .production))
        #expect(throws: SignedDataError.self) { try production.verifyNotification(jws) }
        // "As of now" (2026 and later): the leaf expired on 2025-10-11.
        let now = SignedDataVerifier(options: .init(validationTime: .fixed(Date(timeIntervalSince1970: 1_795_230_000))))
        do {
            _ = try now.verify(jws)
            Issue.record("verified after the leaf expired")
        } catch {
            #expect(error.code == .certificateExpiredAtSignedDate)
        }
        // Without Apple's root in the trusted set the chain does not verify.
        let testRootOnly = SignedDataVerifier(roots: TrustedRoots([]))
        #expect((try? testRootOnly.verify(jws)) == nil)
        // One flipped bit in the payload.
        var parts = jws.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ".").map(String.init)
        parts[1] = parts[1].replacingOccurrences(of: "VEVTVC", with: "VEVTVS")
        do {
            _ = try SignedDataVerifier().verify(parts.joined(separator: "."))
            Issue.record("a tampered Apple payload verified")
        } catch {
            #expect(error.code == .badSignature)
        }
    }
}
