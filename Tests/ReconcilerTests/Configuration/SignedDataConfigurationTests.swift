import Crypto
import Foundation
import Reconciler
import SignedDataTestSupport
import Testing

/// Where signed-data settings come from: trusted roots and the App Store Server API key.
@Suite struct SignedDataConfigurationTests {
    private func temporaryFile(_ name: String, _ text: String) throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("signed-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent(name).path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func rootsAddToApplesUnlessOnlyIsAsked() throws {
        let first = try temporaryFile("a.pem", try TestPKI().rootPEM)
        let second = try temporaryFile("b.pem", try TestPKI().rootPEM)
        let added = try TrustedRootsConfiguration.load(environment: ["APPLE_ROOT_CA_FILE": "\(first):\(second)"])
        #expect(added.certificates.count == 3)
        let only = try TrustedRootsConfiguration.load(environment: [:], flagFiles: [first], only: true)
        #expect(only.certificates.count == 1)
        let viaEnvironment = try TrustedRootsConfiguration.load(
            environment: ["APPLE_ROOT_CA_FILE": second, "APPLE_ROOT_CA_ONLY": "1"])
        #expect(viaEnvironment.certificates.count == 1)
        #expect(throws: ConfigurationError.self) { try TrustedRootsConfiguration.load(environment: [:], only: true) }
        #expect(throws: ConfigurationError.self) {
            try TrustedRootsConfiguration.load(environment: ["APPLE_ROOT_CA_FILE": "/nonexistent/root.pem"])
        }
    }

    @Test func theKeyComesFromAFileAndIsNeverShown() throws {
        let key = P256.Signing.PrivateKey()
        let path = try temporaryFile("AuthKey.p8", key.pemRepresentation)
        let environment = [
            "APPLE_PRIVATE_KEY_FILE": path, "APPLE_KEY_ID": "K", "APPLE_ISSUER_ID": "I", "APPLE_BUNDLE_ID": "B",
        ]
        let configuration = try AppStoreAPIConfiguration.load(environment: environment)
        #expect(configuration.key.publicKey.rawRepresentation == key.publicKey.rawRepresentation)
        #expect(!"\(configuration)".contains(key.pemRepresentation.split(separator: "\n")[1]))
        let token = try configuration.signer().token()
        #expect(!"\(token)".contains(token.value))

        var missingId = environment
        missingId["APPLE_KEY_ID"] = nil
        #expect(throws: ConfigurationError.self) { try AppStoreAPIConfiguration.load(environment: missingId) }
        let rsaLike = try temporaryFile("wrong.p8", P384.Signing.PrivateKey().pemRepresentation)
        do {
            _ = try AppStoreAPIConfiguration.load(
                environment: environment.merging(["APPLE_PRIVATE_KEY_FILE": rsaLike]) { $1 }
            )
            Issue.record("a P-384 key was accepted")
        } catch let error as ConfigurationError {
            #expect(error.message.contains("APPLE_PRIVATE_KEY_FILE") && error.message.contains("EC P-384"))
            #expect(ReconcilerErrorClassifier.exitCode(for: error) == .configuration)
        }
    }
}
