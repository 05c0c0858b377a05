import AppStoreSignedData
import ReceiptDomain

/// Maps verified App Store Server API payloads onto the decision engine's inputs, so the same rules
/// decide a subscription's state whichever API the data came from (docs/signed-data.md, section 5).
///
/// revocationDate -> cancellation date, revocationReason -> cancellation reason, isUpgraded as is;
/// an introductory offer (offerType 1) marks a trial (FREE_TRIAL) or an intro-offer period; offer codes
/// (3) and promotional offers (2) keep their identifier. Auto-renew status 1 = on.
public enum SignedDataMapping {
    public static func transaction(_ t: JWSTransactionDecodedPayload) -> ReceiptTransaction? {
        guard let transactionId = t.transactionId, let original = t.originalTransactionId, let product = t.productId
        else {
            return nil
        }
        let intro = t.offerType == 1
        return ReceiptTransaction(
            transactionId: transactionId,
            originalTransactionId: original,
            productId: product,
            quantity: t.quantity,
            webOrderLineItemId: t.webOrderLineItemId,
            subscriptionGroupIdentifier: t.subscriptionGroupIdentifier,
            purchaseDate: t.purchaseDate,
            originalPurchaseDate: t.originalPurchaseDate,
            expiresDate: t.expiresDate,
            cancellationDate: t.revocationDate,
            cancellationReason: t.revocationDate == nil ? nil : t.revocationReason,
            isUpgraded: t.isUpgraded ?? false,
            isTrialPeriod: intro && t.offerDiscountType == "FREE_TRIAL",
            isInIntroOfferPeriod: intro && t.offerDiscountType != "FREE_TRIAL",
            inAppOwnershipType: t.inAppOwnershipType,
            offerCodeRefName: t.offerType == 3 ? t.offerIdentifier : nil,
            promotionalOfferId: t.offerType == 2 ? t.offerIdentifier : nil,
            appAccountToken: t.appAccountToken
        )
    }

    /// The transaction with what only the App Store Server API says (price, refund type and share) and the
    /// JWS it was verified from.
    public static func transaction(_ t: JWSTransactionDecodedPayload, jws: String) -> ReceiptTransaction? {
        guard var mapped = transaction(t) else { return nil }
        mapped.signedFacts = SignedTransactionFacts(
            priceMilliunits: t.price,
            currency: t.currency,
            storefront: t.storefront,
            offerType: t.offerType,
            offerDiscountType: t.offerDiscountType,
            revocationType: t.revocationDate == nil ? nil : t.revocationType,
            revocationPercentage: t.revocationDate == nil ? nil : t.revocationPercentage,
            transactionReason: t.transactionReason,
            environment: environment(t.environment),
            signedTransaction: jws,
            offerIdentifier: t.offerIdentifier,
            offerPeriod: t.offerPeriod,
            appAccountToken: t.appAccountToken,
            appTransactionId: t.appTransactionId,
            billingPlanType: t.billingPlanType
        )
        return mapped
    }

    public static func renewal(_ r: JWSRenewalInfoDecodedPayload) -> PendingRenewalInfo {
        var renewal = PendingRenewalInfo(
            originalTransactionId: r.originalTransactionId,
            productId: r.productId,
            autoRenewProductId: r.autoRenewProductId,
            autoRenewStatus: r.autoRenewStatus.map { $0 == 1 },
            expirationIntent: r.expirationIntent,
            isInBillingRetryPeriod: r.isInBillingRetryPeriod,
            gracePeriodExpiresDate: r.gracePeriodExpiresDate,
            priceConsentStatus: r.priceIncreaseStatus,
            offerCodeRefName: r.offerType == 3 ? r.offerIdentifier : nil,
            promotionalOfferId: r.offerType == 2 ? r.offerIdentifier : nil
        )
        renewal.renewalPriceMilliunits = r.renewalPrice
        renewal.renewalCurrency = r.currency
        renewal.renewalBillingPlanType = r.renewalBillingPlanType
        renewal.appAccountToken = r.appAccountToken
        renewal.appTransactionId = r.appTransactionId
        return renewal
    }

    public static func environment(_ text: String?) -> AppleEnvironment? {
        text.flatMap(AppleEnvironment.init(appleValue:))
    }
}
