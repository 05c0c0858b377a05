import Foundation

/// Payloads that are not a subscription's: a one-time purchase's transaction, the app transaction of a
/// RESCIND_CONSENT, a mass extension's `summary`, and the undocumented type's own object.
extension ServerAPIRenderer {
    /// `JWSTransactionDecodedPayload` of a consumable or non-consumable: no `expiresDate`, `webOrderLineItemId` or
    /// `subscriptionGroupIdentifier`; refunded in full when refunded by `signedDate`.
    public func oneTimePayload(_ item: OneTimePurchase, signedDate: Int64) -> [UInt8] {
        let family = population.families[item.familyIndex]
        let storefront = Storefront.of(seed: population.seed, familyIndex: family.index)
        var w = JSONWriter(capacity: 768)
        w.beginObject()
        w.field("transactionId", String(item.transactionId))
        w.field("originalTransactionId", String(item.transactionId))
        w.field("bundleId", family.bundleId)
        w.field("productId", item.productId)
        for (key, value) in [("purchaseDate", item.purchase), ("originalPurchaseDate", item.purchase), ("quantity", 1)]
        {
            w.key(key)
            w.int(value)
        }
        w.field("type", item.kind.rawValue)
        w.field("inAppOwnershipType", "PURCHASED")
        w.key("signedDate")
        w.int(signedDate)
        w.field("environment", Self.environment(family))
        w.field("transactionReason", "PURCHASE")
        w.field("storefront", storefront.code)
        w.field("storefrontId", storefront.id)
        w.key("price")
        w.int(item.price(in: storefront))
        w.field("currency", storefront.currency)
        if let refunded = item.refundedAt, refunded <= signedDate {
            w.key("revocationDate")
            w.int(refunded)
            w.key("revocationReason")
            w.int(0)
            w.field("revocationType", "REFUND_FULL")
            w.key("revocationPercentage")
            w.int(100_000)
        }
        w.field("appTransactionId", Self.appTransactionId(family))
        if let token = AppAccountToken.of(seed: population.seed, family: family) { w.field("appAccountToken", token) }
        w.endObject()
        return w.bytes
    }

    /// `JWSAppTransactionDecodedPayload` of the family's app download, for RESCIND_CONSENT's `appData`.
    func appTransactionPayload(_ family: ReceiptFamily, signedDate: Int64) -> [UInt8] {
        var w = JSONWriter(capacity: 512)
        w.beginObject()
        w.field("receiptType", Self.environment(family))
        w.key("appAppleId")
        w.int(identity.appAppleId)
        w.field("bundleId", family.bundleId)
        w.field("applicationVersion", "412")
        w.key("receiptCreationDate")
        w.int(signedDate)
        w.key("originalPurchaseDate")
        w.int(family.appDownloadedAt)
        w.field("originalApplicationVersion", "1.0")
        w.field("appTransactionId", Self.appTransactionId(family))
        w.field("originalPlatform", "iOS")
        w.key("signedDate")
        w.int(signedDate)
        w.endObject()
        return w.bytes
    }

    /// `summary` of a mass extension's RENEWAL_EXTENSION / SUMMARY.
    func writeSummary(_ mass: MassExtension, into w: inout JSONWriter) {
        w.key("summary")
        w.beginObject()
        w.field("requestIdentifier", mass.requestIdentifier)
        w.field("environment", "Production")
        w.key("appAppleId")
        w.int(identity.appAppleId)
        w.field("bundleId", population.bundleId)
        w.field("productId", mass.productId)
        w.key("storefrontCountryCodes")
        w.beginArray()
        for code in mass.storefrontCountryCodes { w.string(code) }
        w.endArray()
        w.key("succeededCount")
        w.int(Int64(mass.succeeded.count))
        w.key("failedCount")
        w.int(Int64(mass.failed.count))
        w.endObject()
    }

    /// The payload of a notice: RESCIND_CONSENT's `appData`, or the undocumented type's own key.
    func writeNotice(_ notice: PopulationNotice, into w: inout JSONWriter) {
        let family = population.families[notice.family]
        switch notice.kind {
        case .rescindConsent:
            w.key("appData")
            w.beginObject()
            w.key("appAppleId")
            w.int(identity.appAppleId)
            w.field("bundleId", family.bundleId)
            w.field("environment", Self.environment(family))
            w.field(
                "signedAppTransactionInfo",
                identity.sign(payload: appTransactionPayload(family, signedDate: notice.at))
            )
            w.endObject()
        case .futureType:
            w.key(PopulationNotice.futureTypeKey)
            w.beginObject()
            w.field("appTransactionId", Self.appTransactionId(family))
            w.field("targetAppTransactionId", String(704_900_000_000_000_000 + UInt64(family.index)))
            w.key("effectiveDate")
            w.int(notice.at + SimTime.day)
            w.endObject()
        }
    }
}
