import Foundation
import ReceiptDomain

/// Where the App Store Server API is and what every request carries. Base URLs may carry a path prefix
/// (`https://proxy.example/apple`); the API's paths (`/inApps/v1/...`) are appended to them.
public struct ServerAPIEndpoints: Sendable {
    public static let defaultProductionURL = "https://api.storekit.apple.com"
    public static let defaultSandboxURL = "https://api.storekit-sandbox.apple.com"

    public var production: String
    public var sandbox: String
    public var connectTimeout: Duration
    public var requestTimeout: Duration
    /// Responses above this size fail as `response_too_large`.
    public var maxResponseBytes: Int

    public init(
        production: String = ServerAPIEndpoints.defaultProductionURL,
        sandbox: String = ServerAPIEndpoints.defaultSandboxURL,
        connectTimeout: Duration = .seconds(5),
        requestTimeout: Duration = .seconds(30),
        maxResponseBytes: Int = 16 << 20
    ) {
        self.production = production
        self.sandbox = sandbox
        self.connectTimeout = connectTimeout
        self.requestTimeout = requestTimeout
        self.maxResponseBytes = maxResponseBytes
    }

    /// The base URL of `environment`, without a trailing slash.
    public func base(for environment: AppleEnvironment) -> String {
        var url = environment == .production ? production : sandbox
        while url.hasSuffix("/") { url.removeLast() }
        return url
    }
}
