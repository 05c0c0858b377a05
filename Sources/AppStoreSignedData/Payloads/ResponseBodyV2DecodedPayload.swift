import Foundation

/// A version 2 App Store Server Notification (`signedPayload`), decoded. The nested signed transaction and
/// renewal info in `data` are JWS strings: verify them with the same verifier.
public struct ResponseBodyV2DecodedPayload: SignedPayload, Equatable {
    /// SUBSCRIBED, DID_RENEW, DID_CHANGE_RENEWAL_PREF, EXPIRED, REFUND, REVOKE, TEST, ...
    public var notificationType: String?
    public var subtype: String?
    /// The deduplication key: Apple retries a delivery with the same UUID.
    public var notificationUUID: String?
    public var version: String?
    public var signedDate: Date?
    public var data: NotificationData?
    public var summary: NotificationSummary?
    public var externalPurchaseToken: ExternalPurchaseToken?

    public init() {}

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        notificationType = try c.string("notificationType")
        subtype = try c.string("subtype")
        notificationUUID = try c.string("notificationUUID")
        version = try c.string("version")
        signedDate = try c.date("signedDate")
        data = try c.value(NotificationData.self, "data")
        summary = try c.value(NotificationSummary.self, "summary")
        externalPurchaseToken = try c.value(ExternalPurchaseToken.self, "externalPurchaseToken")
    }

    /// The app and environment come from `data`, else `summary`, else `externalPurchaseToken` (whose
    /// environment is Sandbox when its id starts with `SANDBOX`).
    public func checkClaims(_ options: SignedDataVerifier.Options) throws(SignedDataError) {
        if let data {
            try Self.check(
                bundleId: data.bundleId,
                environment: data.environment,
                appAppleId: data.appAppleId,
                against: options
            )
        } else if let summary {
            try Self.check(
                bundleId: summary.bundleId,
                environment: summary.environment,
                appAppleId: summary.appAppleId,
                against: options
            )
        } else if let token = externalPurchaseToken {
            let environment = (token.externalPurchaseId ?? "").hasPrefix("SANDBOX") ? "Sandbox" : "Production"
            try Self.check(
                bundleId: token.bundleId,
                environment: environment,
                appAppleId: token.appAppleId,
                against: options
            )
        } else {
            throw SignedDataError(.malformed, "the notification has no data, summary or externalPurchaseToken")
        }
    }
}
