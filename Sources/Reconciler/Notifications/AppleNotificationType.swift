/// The App Store Server Notifications V2 types Apple documents through 2026 (docs/signed-data.md, section 1). A
/// verified notification of any other type is stored as it came and counted "not understood" in the report: Apple
/// adds types as it goes, and a new one is never refused.
public enum AppleNotificationType: String, CaseIterable, Sendable {
    case subscribed = "SUBSCRIBED"
    case didRenew = "DID_RENEW"
    case didChangeRenewalPref = "DID_CHANGE_RENEWAL_PREF"
    case didChangeRenewalStatus = "DID_CHANGE_RENEWAL_STATUS"
    case offerRedeemed = "OFFER_REDEEMED"
    case expired = "EXPIRED"
    case didFailToRenew = "DID_FAIL_TO_RENEW"
    case gracePeriodExpired = "GRACE_PERIOD_EXPIRED"
    case priceIncrease = "PRICE_INCREASE"
    case refund = "REFUND"
    case refundDeclined = "REFUND_DECLINED"
    case refundReversed = "REFUND_REVERSED"
    case revoke = "REVOKE"
    case renewalExtended = "RENEWAL_EXTENDED"
    /// A mass renewal-date extension; its payload is a `summary`, not a subscription.
    case renewalExtension = "RENEWAL_EXTENSION"
    /// A customer asked for a refund; Apple asks for consumption information within 12 hours.
    case consumptionRequest = "CONSUMPTION_REQUEST"
    /// Its payload is an `externalPurchaseToken`.
    case externalPurchaseToken = "EXTERNAL_PURCHASE_TOKEN"
    /// A consumable, non-consumable or non-renewing purchase (production since May 2025): never a subscription row.
    case oneTimeCharge = "ONE_TIME_CHARGE"
    /// The customer withdrew consent for the app's data use (November 2025); its payload is an `appData`.
    case rescindConsent = "RESCIND_CONSENT"
    /// Advanced Commerce API subscriptions (2025): metadata, migration and price changes.
    case metadataUpdate = "METADATA_UPDATE"
    case migration = "MIGRATION"
    case priceChange = "PRICE_CHANGE"
    case test = "TEST"

    /// True for a type Apple documents (see the cases).
    public static func isUnderstood(_ type: String) -> Bool { AppleNotificationType(rawValue: type) != nil }
}
