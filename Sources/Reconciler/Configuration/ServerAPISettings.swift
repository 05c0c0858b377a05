import AppStoreClient
import AppStoreSignedData
import Foundation

/// Everything a run needs to use the App Store Server API: the key and ids that sign tokens
/// (`AppStoreAPIConfiguration`), the App Apple ID production payloads must carry, the base URLs, the roots
/// signed data must chain to, and the per-endpoint rate limits.
///
/// Settings (flags override): `APPLE_KEY_ID`, `APPLE_ISSUER_ID`, `APPLE_PRIVATE_KEY_FILE` (or the systemd
/// credential `apple-private-key`), `APPLE_BUNDLE_ID`, `APPLE_APP_APPLE_ID`, `APPLE_SERVER_API_URL`,
/// `APPLE_SERVER_API_SANDBOX_URL`, `APPLE_ROOT_CA_FILE`. A missing or malformed one is a
/// `ConfigurationError` (exit 78) naming it, before any request. See docs/operations.md.
public struct ServerAPISettings: Sendable {
    public var api: AppStoreAPIConfiguration
    public var appAppleId: Int64
    public var endpoints: ServerAPIEndpoints
    public var roots: TrustedRoots
    public var budgets: ServerAPIBudgets

    public init(
        api: AppStoreAPIConfiguration,
        appAppleId: Int64,
        endpoints: ServerAPIEndpoints,
        roots: TrustedRoots,
        budgets: ServerAPIBudgets = ServerAPIBudgets()
    ) {
        self.api = api
        self.appAppleId = appAppleId
        self.endpoints = endpoints
        self.roots = roots
        self.budgets = budgets
    }

    /// True when an In-App Purchase key is configured (a flag, `APPLE_PRIVATE_KEY_FILE`, or the systemd
    /// credential): what `--source auto` looks at.
    public static func keyConfigured(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        privateKeyFile: String?
    ) -> Bool {
        AppStoreAPIConfiguration.privateKeyLocation(environment: environment, flagFile: privateKeyFile) != nil
    }

    /// The source a run uses: `--source` (`flag`), else `APPLE_SOURCE`, else `auto`; `auto` is the Server API
    /// when a key is configured, else verifyReceipt.
    /// - Throws: `ConfigurationError` for an `APPLE_SOURCE` that names no source.
    public static func resolveSource(
        flag: AppleSourceKind?,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        privateKeyFile: String?
    ) throws -> AppleSourceKind {
        var requested = flag ?? .auto
        if flag == nil, let text = nonEmpty(environment["APPLE_SOURCE"]) {
            guard let named = AppleSourceKind(rawValue: text) else {
                throw ConfigurationError(
                    "APPLE_SOURCE must be auto, server-api or verify-receipt, not \(text.prefix(40))"
                )
            }
            requested = named
        }
        guard requested == .auto else { return requested }
        return keyConfigured(environment: environment, privateKeyFile: privateKeyFile) ? .serverAPI : .verifyReceipt
    }

    /// - Throws: `ConfigurationError` naming the setting at fault.
    public static func load(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        privateKeyFile: String? = nil,
        keyId: String? = nil,
        issuerId: String? = nil,
        bundleId: String? = nil,
        appAppleId flagAppAppleId: String? = nil,
        productionURL flagProductionURL: String? = nil,
        sandboxURL flagSandboxURL: String? = nil,
        rootFiles: [String] = [],
        rootsOnly: Bool = false,
        budgets: ServerAPIBudgets = ServerAPIBudgets(),
        connectTimeout: Duration = .seconds(5),
        requestTimeout: Duration = .seconds(30)
    ) throws -> ServerAPISettings {
        let api = try AppStoreAPIConfiguration.load(
            environment: environment,
            privateKeyFile: privateKeyFile,
            keyId: keyId,
            issuerId: issuerId,
            bundleId: bundleId
        )
        let appAppleIdSetting = flagAppAppleId != nil ? "--app-apple-id" : "APPLE_APP_APPLE_ID"
        guard let appAppleIdText = flagAppAppleId ?? nonEmpty(environment["APPLE_APP_APPLE_ID"]) else {
            throw ConfigurationError(
                "no App Apple ID: set APPLE_APP_APPLE_ID or pass --app-apple-id (App Store Connect, App Information, "
                    + "Apple ID); production signed data is checked against it"
            )
        }
        guard let appAppleId = Int64(appAppleIdText), appAppleId > 0 else {
            throw ConfigurationError("\(appAppleIdSetting): \(appAppleIdText.prefix(40)) is not a positive number")
        }
        let production =
            flagProductionURL ?? nonEmpty(environment["APPLE_SERVER_API_URL"])
            ?? ServerAPIEndpoints.defaultProductionURL
        let sandbox =
            flagSandboxURL ?? nonEmpty(environment["APPLE_SERVER_API_SANDBOX_URL"])
            ?? ServerAPIEndpoints.defaultSandboxURL
        try AppleConfiguration.validateEndpoint(
            production,
            setting: flagProductionURL != nil ? "--server-api-url" : "APPLE_SERVER_API_URL"
        )
        try AppleConfiguration.validateEndpoint(
            sandbox,
            setting: flagSandboxURL != nil ? "--server-api-sandbox-url" : "APPLE_SERVER_API_SANDBOX_URL"
        )
        let roots = try TrustedRootsConfiguration.load(environment: environment, flagFiles: rootFiles, only: rootsOnly)
        return ServerAPISettings(
            api: api,
            appAppleId: appAppleId,
            endpoints: ServerAPIEndpoints(
                production: production,
                sandbox: sandbox,
                connectTimeout: connectTimeout,
                requestTimeout: requestTimeout
            ),
            roots: roots,
            budgets: budgets
        )
    }
}
