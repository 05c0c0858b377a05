import Foundation

/// Which of Apple's APIs a token is for: both take an ES256 JWT with the audience `appstoreconnect-v1`, but their
/// claims and longest lifetimes differ (docs/signed-data.md, "API tokens").
public enum APITokenScope: Sendable, Equatable {
    /// The App Store Server API: a `bid` claim (the app's bundle id); at most 60 minutes.
    case appStoreServer(bundleId: String)
    /// The App Store Connect API (sales and finance reports), with a team key: no `bid`; at most 20 minutes.
    case appStoreConnect

    /// The longest `exp - iat` Apple accepts, in seconds.
    public var maximumLifetime: TimeInterval {
        switch self {
        case .appStoreServer: 3600
        case .appStoreConnect: 1200
        }
    }
}
