import Foundation

/// A payload the App Store signs: decoded after its JWS verified, and checked against the configuration.
public protocol SignedPayload: Decodable, Sendable {
    /// When the App Store signed it; the chain's validity is checked at this instant by default.
    var signedDate: Date? { get }
    /// The configured bundle id, environment and App Apple ID this payload must match (nil: not checked).
    func checkClaims(_ options: SignedDataVerifier.Options) throws(SignedDataError)
}

extension SignedPayload {
    static func check(
        bundleId: String?,
        environment: String?,
        appAppleId: Int64?,
        against options: SignedDataVerifier.Options,
        checksBundle: Bool = true,
        checksAppAppleId: Bool = true
    ) throws(SignedDataError) {
        if checksBundle, let expected = options.bundleId, bundleId != expected {
            throw SignedDataError(
                .bundleMismatch,
                "the payload is for bundle \(bundleId ?? "(none)"), expected \(expected)"
            )
        }
        if let expected = options.environment, environment.flatMap(AppStoreEnvironment.init(appleValue:)) != expected {
            throw SignedDataError(
                .environmentMismatch,
                "the payload is from environment \(environment ?? "(none)"), expected \(expected.rawValue)"
            )
        }
        // Only notifications carry an appAppleId; transactions and renewal info have none to check.
        if checksAppAppleId, let expected = options.appAppleId,
            environment.flatMap(AppStoreEnvironment.init(appleValue:)) == .production,
            appAppleId != expected
        {
            throw SignedDataError(
                .appAppleIdMismatch,
                "the payload is for appAppleId \(appAppleId.map(String.init) ?? "(none)"), expected \(expected)"
            )
        }
    }
}
