import AppStoreSignedData
import Foundation

/// What signs App Store Server API tokens: the In-App Purchase key (`.p8`), its key id, the issuer id and
/// the bundle id.
///
/// The key comes from a file only: `--private-key-file`, `APPLE_PRIVATE_KEY_FILE`, or the systemd
/// credential `apple-private-key` in `$CREDENTIALS_DIRECTORY`; never from a flag's value (process
/// arguments are visible in `ps`) and never printed. Ids: `APPLE_KEY_ID`, `APPLE_ISSUER_ID`,
/// `APPLE_BUNDLE_ID`, with flags overriding.
public struct AppStoreAPIConfiguration: Sendable {
    /// The file name looked up in `$CREDENTIALS_DIRECTORY` (systemd `LoadCredential=apple-private-key:...`).
    public static let credentialName = "apple-private-key"

    public var key: APIPrivateKey
    public var keyId: String
    public var issuerId: String
    public var bundleId: String

    /// - Throws: `ConfigurationError` (exit 78) naming the setting at fault; a key that is not EC P-256 says so.
    public static func load(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        privateKeyFile: String? = nil,
        keyId flagKeyId: String? = nil,
        issuerId flagIssuerId: String? = nil,
        bundleId flagBundleId: String? = nil
    ) throws -> AppStoreAPIConfiguration {
        let key = try loadPrivateKey(environment: environment, flagFile: privateKeyFile)
        guard let keyId = flagKeyId ?? nonEmpty(environment["APPLE_KEY_ID"]) else {
            throw ConfigurationError("no App Store Server API key id: set APPLE_KEY_ID or pass --key-id")
        }
        guard let issuerId = flagIssuerId ?? nonEmpty(environment["APPLE_ISSUER_ID"]) else {
            throw ConfigurationError("no App Store Server API issuer id: set APPLE_ISSUER_ID or pass --issuer-id")
        }
        guard let bundleId = flagBundleId ?? nonEmpty(environment["APPLE_BUNDLE_ID"]) else {
            throw ConfigurationError("no bundle id: set APPLE_BUNDLE_ID or pass --bundle-id")
        }
        return AppStoreAPIConfiguration(key: key, keyId: keyId, issuerId: issuerId, bundleId: bundleId)
    }

    /// A token signer for this configuration (5-minute tokens, reused until a minute before expiry).
    public func signer(lifetime: TimeInterval = 300) throws -> APITokenSigner {
        do {
            return try APITokenSigner(
                key: key,
                keyId: keyId,
                issuerId: issuerId,
                scope: .appStoreServer(bundleId: bundleId),
                lifetime: lifetime
            )
        } catch {
            throw ConfigurationError("App Store Server API token: \(error.message)")
        }
    }

    /// Where the key is, from (in order) `--private-key-file`, `APPLE_PRIVATE_KEY_FILE`, the systemd
    /// credential, and the setting that named it; nil when none is configured.
    public static func privateKeyLocation(
        environment: [String: String],
        flagFile: String?
    ) -> (path: String, setting: String)? {
        keyLocation(source, environment: environment, flagFile: flagFile)
    }

    /// Where this configuration's key comes from.
    static let source = KeySource(
        flag: "--private-key-file",
        variable: "APPLE_PRIVATE_KEY_FILE",
        credential: credentialName,
        what: "App Store Server API private key"
    )

    /// The settings a key file may be named by, in the order they are read: a flag, an environment variable, a
    /// systemd credential (`LoadCredential=`) in `$CREDENTIALS_DIRECTORY`.
    struct KeySource: Sendable {
        let flag: String
        let variable: String
        let credential: String
        /// How errors name the key.
        let what: String
    }

    /// Where a key of `source` is, and the setting that named it; nil when none is configured.
    static func keyLocation(
        _ source: KeySource,
        environment: [String: String],
        flagFile: String?
    ) -> (path: String, setting: String)? {
        if let file = flagFile ?? nonEmpty(environment[source.variable]) {
            return (file, flagFile != nil ? source.flag : source.variable)
        }
        if let dir = nonEmpty(environment["CREDENTIALS_DIRECTORY"]) {
            let path = (dir as NSString).appendingPathComponent(source.credential)
            if FileManager.default.fileExists(atPath: path) { return (path, "systemd credential \(source.credential)") }
        }
        return nil
    }

    /// The key, from (in order) `--private-key-file`, `APPLE_PRIVATE_KEY_FILE`, the systemd credential.
    static func loadPrivateKey(environment: [String: String], flagFile: String?) throws -> APIPrivateKey {
        try loadKey(source, environment: environment, flagFile: flagFile)
    }

    /// A PKCS#8 PEM EC P-256 key (`.p8`) from where `source` names it; never from a flag's value, never printed.
    static func loadKey(_ source: KeySource, environment: [String: String], flagFile: String?) throws -> APIPrivateKey {
        guard let (path, setting) = keyLocation(source, environment: environment, flagFile: flagFile) else {
            throw ConfigurationError(
                "no \(source.what): set \(source.variable) (the .p8 file), pass \(source.flag), or provide a systemd "
                    + "credential named \(source.credential)"
            )
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError("\(setting): cannot read \(path)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ConfigurationError("\(setting): \(path) is not text (expected the PKCS#8 PEM .p8 file)")
        }
        do {
            return try APIPrivateKey(pem: text)
        } catch {
            throw ConfigurationError("\(setting): \(path): \(error.message)")
        }
    }
}
