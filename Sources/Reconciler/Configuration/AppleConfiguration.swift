import Foundation

/// Where and how the reconciler talks to Apple's verifyReceipt endpoints.
///
/// Built from the environment (`APPLE_SHARED_SECRET` or `APPLE_SHARED_SECRET_FILE` or a systemd credential,
/// `APPLE_BUNDLE_ID`, `APPLE_VERIFY_URL`, `APPLE_SANDBOX_VERIFY_URL`) with command-line flags overriding.
/// The secret itself is never accepted from a flag: process arguments are visible to every user in `ps`.
public struct AppleConfiguration: Sendable {
    public static let defaultProductionURL = "https://buy.itunes.apple.com/verifyReceipt"
    public static let defaultSandboxURL = "https://sandbox.itunes.apple.com/verifyReceipt"
    /// The file name looked up in `$CREDENTIALS_DIRECTORY` (systemd `LoadCredential=apple-shared-secret:...`).
    public static let credentialName = "apple-shared-secret"

    public var productionURL: String
    public var sandboxURL: String
    public var sharedSecret: Secret
    /// The app's bundle id; a receipt of another app is rejected. Required for `run` and `backfill`.
    public var bundleId: String?
    /// `exclude-old-transactions` in the request. Default false: the ledger needs every renewal since the
    /// last check. See docs/architecture.md ("Which `exclude-old-transactions`?").
    public var excludeOldTransactions: Bool

    public init(
        productionURL: String = AppleConfiguration.defaultProductionURL,
        sandboxURL: String = AppleConfiguration.defaultSandboxURL,
        sharedSecret: Secret,
        bundleId: String?,
        excludeOldTransactions: Bool = false
    ) {
        self.productionURL = productionURL
        self.sandboxURL = sandboxURL
        self.sharedSecret = sharedSecret
        self.bundleId = bundleId
        self.excludeOldTransactions = excludeOldTransactions
    }

    /// Loads the configuration: flags (non-nil arguments) override the environment.
    /// - Throws: `ConfigurationError` naming the setting at fault.
    public static func load(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        productionURL flagProductionURL: String? = nil,
        sandboxURL flagSandboxURL: String? = nil,
        bundleId flagBundleId: String? = nil,
        sharedSecretFile flagSecretFile: String? = nil,
        excludeOldTransactions: Bool = false
    ) throws -> AppleConfiguration {
        let production = flagProductionURL ?? nonEmpty(environment["APPLE_VERIFY_URL"]) ?? defaultProductionURL
        let sandbox = flagSandboxURL ?? nonEmpty(environment["APPLE_SANDBOX_VERIFY_URL"]) ?? defaultSandboxURL
        try validateEndpoint(production, setting: flagProductionURL != nil ? "--verify-url" : "APPLE_VERIFY_URL")
        try validateEndpoint(
            sandbox,
            setting: flagSandboxURL != nil ? "--sandbox-verify-url" : "APPLE_SANDBOX_VERIFY_URL"
        )
        let secret = try loadSecret(environment: environment, flagFile: flagSecretFile)
        let bundle = flagBundleId ?? nonEmpty(environment["APPLE_BUNDLE_ID"])
        return AppleConfiguration(
            productionURL: production,
            sandboxURL: sandbox,
            sharedSecret: secret,
            bundleId: bundle,
            excludeOldTransactions: excludeOldTransactions
        )
    }

    /// The shared secret, from (in order) `--shared-secret-file`, `APPLE_SHARED_SECRET_FILE`, the systemd
    /// credential `apple-shared-secret` in `$CREDENTIALS_DIRECTORY`, or `APPLE_SHARED_SECRET`.
    static func loadSecret(environment: [String: String], flagFile: String?) throws -> Secret {
        if let path = flagFile ?? nonEmpty(environment["APPLE_SHARED_SECRET_FILE"]) {
            let setting = flagFile != nil ? "--shared-secret-file" : "APPLE_SHARED_SECRET_FILE"
            return try readSecretFile(path, setting: setting)
        }
        if let dir = nonEmpty(environment["CREDENTIALS_DIRECTORY"]) {
            let path = (dir as NSString).appendingPathComponent(credentialName)
            if FileManager.default.fileExists(atPath: path) {
                return try readSecretFile(path, setting: "systemd credential \(credentialName)")
            }
        }
        if let value = environment["APPLE_SHARED_SECRET"] {
            let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !trimmed.isEmpty else { throw ConfigurationError("APPLE_SHARED_SECRET is set but empty") }
            return Secret(trimmed)
        }
        throw ConfigurationError(
            "no App Store shared secret: set APPLE_SHARED_SECRET_FILE (a file holding it), "
                + "APPLE_SHARED_SECRET, or a systemd credential named \(credentialName)"
        )
    }

    static func readSecretFile(_ path: String, setting: String) throws -> Secret {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError("\(setting): cannot read \(path)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ConfigurationError("\(setting): \(path) is not UTF-8 text")
        }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw ConfigurationError("\(setting): \(path) is empty") }
        return Secret(trimmed)
    }

    /// `https://` anywhere; plain `http://` only to a loopback host (the simulator), never elsewhere.
    public static func validateEndpoint(_ url: String, setting: String) throws {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            let host = components.host, !host.isEmpty
        else {
            throw ConfigurationError("\(setting): \(url.prefix(200)) is not a URL")
        }
        switch scheme {
        case "https":
            return
        case "http":
            guard isLoopback(host) else {
                throw ConfigurationError(
                    "\(setting): plain http:// is allowed only to a loopback host (127.0.0.0/8, ::1, localhost), "
                        + "not \(host); use https://"
                )
            }
        default:
            throw ConfigurationError("\(setting): unsupported scheme \(scheme)://; use https://")
        }
    }

    static func isLoopback(_ host: String) -> Bool {
        let h = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if h == "localhost" || h == "::1" { return true }
        let parts = h.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts.allSatisfy({ UInt8($0) != nil }) else { return false }
        return parts[0] == "127"
    }
}

@inline(__always)
func nonEmpty(_ value: String?) -> String? {
    guard let value, !value.isEmpty else { return nil }
    return value
}
