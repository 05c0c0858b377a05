import AppStoreSignedData
import ArgumentParser
import Foundation
import Reconciler

/// `renewal-reconciler check-api-key`: loads the App Store Server API key the way a run will, signs a token
/// and verifies it with the key's public half. Prints the token's header and claims, never the token or
/// the key. Exit 0 when usable, 78 when not (the message names the setting at fault).
struct CheckAPIKeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-api-key",
        abstract: "Check the App Store Server API key: sign a token offline and show its header and claims.",
        discussion: """
            The key is the In-App Purchase key from App Store Connect (the .p8 file, PKCS#8 PEM, EC P-256), read \
            from --private-key-file, APPLE_PRIVATE_KEY_FILE or the systemd credential apple-private-key \
            ($CREDENTIALS_DIRECTORY/apple-private-key); never from a flag's value and never printed. Ids: \
            APPLE_KEY_ID, APPLE_ISSUER_ID, APPLE_BUNDLE_ID (flags override). Nothing is sent anywhere.
            """
    )

    @Option(help: ArgumentHelp("The .p8 key file (overrides APPLE_PRIVATE_KEY_FILE).", valueName: "file"))
    var privateKeyFile: String?

    @Option(help: "The key's id in App Store Connect (overrides APPLE_KEY_ID).")
    var keyId: String?

    @Option(help: "The issuer id in App Store Connect (overrides APPLE_ISSUER_ID).")
    var issuerId: String?

    @Option(help: "The app's bundle id (overrides APPLE_BUNDLE_ID).")
    var bundleId: String?

    func run() throws {
        let signer: APITokenSigner
        do {
            let configuration = try AppStoreAPIConfiguration.load(
                privateKeyFile: privateKeyFile,
                keyId: keyId,
                issuerId: issuerId,
                bundleId: bundleId
            )
            signer = try configuration.signer()
        } catch {
            FileHandle.standardError.write(Data("renewal-reconciler check-api-key: error: \(error)\n".utf8))
            Foundation.exit(ReconcilerExitCode.configuration.rawValue)
        }
        let token = signer.token()
        let parts = token.value.split(separator: ".")
        let verified = APITokenCheck.verifies(token, with: signer)
        let json = ExplainJSON.object([
            ("header", APITokenCheck.json(parts.first)),
            ("claims", APITokenCheck.json(parts.dropFirst().first)),
            ("lifetime_seconds", .integer(Int64(signer.lifetime))),
            ("signature_verified", .bool(verified)),
        ])
        print(json.text(pretty: true), terminator: "")
        if !verified { Foundation.exit(ReconcilerExitCode.configuration.rawValue) }
    }
}
