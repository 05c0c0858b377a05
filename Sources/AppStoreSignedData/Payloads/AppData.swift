import Foundation

/// The `appData` of a notification about the app rather than a purchase (RESCIND_CONSENT, from November 2025):
/// the app's ids and environment, and the customer's signed app transaction (docs/signed-data.md, section 1).
public struct AppData: Decodable, Sendable, Equatable {
    public var appAppleId: Int64?
    public var bundleId: String?
    public var environment: String?
    /// A JWS of the customer's app transaction (verified with the same verifier when read).
    public var signedAppTransactionInfo: String?

    public init() {}

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        appAppleId = try c.int64("appAppleId")
        bundleId = try c.string("bundleId")
        environment = try c.string("environment")
        signedAppTransactionInfo = try c.string("signedAppTransactionInfo")
    }
}
