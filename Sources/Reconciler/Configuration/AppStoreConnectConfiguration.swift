import AppStoreSignedData
import Foundation

/// What `apple-reports download` signs its App Store Connect API tokens with: a team API key (App Store Connect,
/// Users and Access, Integrations, Team Keys, with a role that may read sales and finance reports; not the
/// In-App Purchase key of the App Store Server API), its key id, the issuer id, and the vendor number the
/// reports belong to (docs/apple-reports.md, "Downloading").
///
/// The key comes from a file only: `--key-file`, `APP_STORE_CONNECT_KEY_FILE`, or the systemd credential
/// `app-store-connect-key`; never from a flag's value and never printed. Ids: `APP_STORE_CONNECT_KEY_ID`,
/// `APP_STORE_CONNECT_ISSUER_ID`, `APP_STORE_CONNECT_VENDOR_NUMBER`, with flags overriding.
public struct AppStoreConnectConfiguration: Sendable {
    static let source = AppStoreAPIConfiguration.KeySource(
        flag: "--key-file",
        variable: "APP_STORE_CONNECT_KEY_FILE",
        credential: "app-store-connect-key",
        what: "App Store Connect API key"
    )

    public var key: APIPrivateKey
    public var keyId: String
    public var issuerId: String
    public var vendorNumber: String

    /// - Throws: `ConfigurationError` (exit 78) naming the setting at fault.
    public static func load(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        keyFile: String? = nil,
        keyId flagKeyId: String? = nil,
        issuerId flagIssuerId: String? = nil,
        vendorNumber flagVendorNumber: String? = nil
    ) throws -> AppStoreConnectConfiguration {
        let key = try AppStoreAPIConfiguration.loadKey(source, environment: environment, flagFile: keyFile)
        func setting(_ flag: String?, _ variable: String, _ name: String, _ option: String) throws -> String {
            guard let value = flag ?? nonEmpty(environment[variable]) else {
                throw ConfigurationError("no App Store Connect \(name): set \(variable) or pass \(option)")
            }
            return value
        }
        let vendorNumber = try setting(
            flagVendorNumber,
            "APP_STORE_CONNECT_VENDOR_NUMBER",
            "vendor number",
            "--vendor-number"
        )
        guard vendorNumber.allSatisfy(\.isNumber) else {
            throw ConfigurationError("the App Store Connect vendor number is digits only, like 85012345")
        }
        return AppStoreConnectConfiguration(
            key: key,
            keyId: try setting(flagKeyId, "APP_STORE_CONNECT_KEY_ID", "key id", "--key-id"),
            issuerId: try setting(flagIssuerId, "APP_STORE_CONNECT_ISSUER_ID", "issuer id", "--issuer-id"),
            vendorNumber: vendorNumber
        )
    }

    /// A token signer for the App Store Connect API (10-minute tokens, within Apple's 20, renewed a minute early).
    public func signer(lifetime: TimeInterval = 600) throws -> APITokenSigner {
        do {
            return try APITokenSigner(
                key: key,
                keyId: keyId,
                issuerId: issuerId,
                scope: .appStoreConnect,
                lifetime: lifetime
            )
        } catch {
            throw ConfigurationError("App Store Connect API token: \(error.message)")
        }
    }
}
