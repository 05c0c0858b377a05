import Foundation

/// One entry of `pending_renewal_info[]`: what happens at the next renewal.
///
/// Always matched to a subscription by `originalTransactionId`, never by array index.
public struct PendingRenewalInfo: Sendable, Equatable {
    public var originalTransactionId: String?
    public var productId: String?
    /// The product the subscription renews into (differs from `productId` on a pending plan change).
    public var autoRenewProductId: String?
    /// `true` will renew, `false` the customer turned auto-renew off.
    public var autoRenewStatus: Bool?
    /// 1 cancelled, 2 billing error, 3 declined price increase, 4 product unavailable, 5 other.
    public var expirationIntent: Int?
    public var isInBillingRetryPeriod: Bool?
    public var gracePeriodExpiresDate: Date?
    public var priceConsentStatus: Int?
    public var offerCodeRefName: String?
    public var promotionalOfferId: String?
    /// App Store Server API only: the next renewal's price (milliunits of `renewalCurrency`), its billing plan, and
    /// the customer's ids (docs/decision-rules.md, "What the row keeps beside the entitlement").
    public var renewalPriceMilliunits: Int64? = nil
    public var renewalCurrency: String? = nil
    public var renewalBillingPlanType: String? = nil
    public var appAccountToken: String? = nil
    public var appTransactionId: String? = nil

    public init(
        originalTransactionId: String? = nil,
        productId: String? = nil,
        autoRenewProductId: String? = nil,
        autoRenewStatus: Bool? = nil,
        expirationIntent: Int? = nil,
        isInBillingRetryPeriod: Bool? = nil,
        gracePeriodExpiresDate: Date? = nil,
        priceConsentStatus: Int? = nil,
        offerCodeRefName: String? = nil,
        promotionalOfferId: String? = nil
    ) {
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.autoRenewProductId = autoRenewProductId
        self.autoRenewStatus = autoRenewStatus
        self.expirationIntent = expirationIntent
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.priceConsentStatus = priceConsentStatus
        self.offerCodeRefName = offerCodeRefName
        self.promotionalOfferId = promotionalOfferId
    }

    init(fields: JSONFields) throws(ReceiptParseError) {
        self.init(
            originalTransactionId: try fields.string("original_transaction_id"),
            productId: try fields.string("product_id"),
            autoRenewProductId: try fields.string("auto_renew_product_id"),
            autoRenewStatus: try fields.bool("auto_renew_status"),
            expirationIntent: try fields.int("expiration_intent"),
            isInBillingRetryPeriod: try fields.bool("is_in_billing_retry_period"),
            gracePeriodExpiresDate: try fields.date("grace_period_expires_date_ms"),
            priceConsentStatus: try fields.int("price_consent_status"),
            offerCodeRefName: try fields.string("offer_code_ref_name"),
            promotionalOfferId: try fields.string("promotional_offer_id")
        )
    }
}
