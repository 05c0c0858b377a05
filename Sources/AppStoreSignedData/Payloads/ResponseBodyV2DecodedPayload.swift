import Foundation

/// A version 2 App Store Server Notification (`signedPayload`), decoded. The nested signed transaction and
/// renewal info in `data` are JWS strings: verify them with the same verifier. Apple sends exactly one of `data`,
/// `summary`, `externalPurchaseToken` and `appData`, and adds types and shapes as it goes: a notification with
/// none of the four is still Apple's once its signature verifies (docs/signed-data.md, section 1).
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
    public var appData: AppData?

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
        appData = try c.value(AppData.self, "appData")
    }

    /// The environment the payload names (`data`, `summary`, `appData`; an external purchase token's from its id).
    public var environment: String? {
        if let environment = data?.environment ?? summary?.environment ?? appData?.environment { return environment }
        return externalPurchaseToken.map {
            ($0.externalPurchaseId ?? "").hasPrefix("SANDBOX") ? "Sandbox" : "Production"
        }
    }

    /// The bundle id the payload names, whichever shape it has.
    public var bundleId: String? {
        data?.bundleId ?? summary?.bundleId ?? externalPurchaseToken?.bundleId ?? appData?.bundleId
    }

    /// True when the payload has one of the shapes Apple documents (`data`, `summary`, `externalPurchaseToken`,
    /// `appData`); false for a shape Apple added later, stored but not acted on.
    public var hasKnownShape: Bool { data != nil || summary != nil || externalPurchaseToken != nil || appData != nil }

    /// The app and environment come from `data`, else `summary`, else `externalPurchaseToken` (whose environment is
    /// Sandbox when its id starts with `SANDBOX`), else `appData`. A payload of none of these shapes names no app to
    /// check: its signature and chain are all there is to verify.
    public func checkClaims(_ options: SignedDataVerifier.Options) throws(SignedDataError) {
        guard hasKnownShape else { return }
        let appAppleId =
            data?.appAppleId ?? summary?.appAppleId ?? externalPurchaseToken?.appAppleId ?? appData?.appAppleId
        try Self.check(bundleId: bundleId, environment: environment, appAppleId: appAppleId, against: options)
    }
}
