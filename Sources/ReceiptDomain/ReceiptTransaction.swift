import Foundation

/// One entry of `latest_receipt_info[]` or `receipt.in_app[]`.
///
/// Dates come from the `_ms` fields only (the formatted `_date` / `_pst` strings are ignored).
/// `transaction_id`, `original_transaction_id` and `product_id` are required; everything else is optional.
public struct ReceiptTransaction: Sendable, Equatable {
    public var transactionId: String
    public var originalTransactionId: String
    public var productId: String
    public var quantity: Int?
    public var webOrderLineItemId: String?
    public var subscriptionGroupIdentifier: String?
    public var purchaseDate: Date?
    public var originalPurchaseDate: Date?
    public var expiresDate: Date?
    /// Set for refunds/revocations and also for `is_upgraded` transactions (the upgrade time).
    public var cancellationDate: Date?
    /// `1` issue in the app, `0` other; only with a cancellation.
    public var cancellationReason: Int?
    /// True when this transaction was replaced by an upgrade (not a refund).
    public var isUpgraded: Bool
    public var isTrialPeriod: Bool
    public var isInIntroOfferPeriod: Bool
    /// `PURCHASED` or `FAMILY_SHARED`.
    public var inAppOwnershipType: String?
    public var offerCodeRefName: String?
    public var promotionalOfferId: String?
    public var appAccountToken: String?
    /// The App Store Server API's extra facts (price, refund type and share, the signed JWS); nil from verifyReceipt.
    public var signedFacts: SignedTransactionFacts? = nil

    public init(
        transactionId: String,
        originalTransactionId: String,
        productId: String,
        quantity: Int? = nil,
        webOrderLineItemId: String? = nil,
        subscriptionGroupIdentifier: String? = nil,
        purchaseDate: Date? = nil,
        originalPurchaseDate: Date? = nil,
        expiresDate: Date? = nil,
        cancellationDate: Date? = nil,
        cancellationReason: Int? = nil,
        isUpgraded: Bool = false,
        isTrialPeriod: Bool = false,
        isInIntroOfferPeriod: Bool = false,
        inAppOwnershipType: String? = nil,
        offerCodeRefName: String? = nil,
        promotionalOfferId: String? = nil,
        appAccountToken: String? = nil
    ) {
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.quantity = quantity
        self.webOrderLineItemId = webOrderLineItemId
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.expiresDate = expiresDate
        self.cancellationDate = cancellationDate
        self.cancellationReason = cancellationReason
        self.isUpgraded = isUpgraded
        self.isTrialPeriod = isTrialPeriod
        self.isInIntroOfferPeriod = isInIntroOfferPeriod
        self.inAppOwnershipType = inAppOwnershipType
        self.offerCodeRefName = offerCodeRefName
        self.promotionalOfferId = promotionalOfferId
        self.appAccountToken = appAccountToken
    }

    /// Refunded or revoked: a cancellation that is not an upgrade. Counts as never purchased.
    public var isRefunded: Bool { cancellationDate != nil && !isUpgraded }

    init(fields: JSONFields) throws(ReceiptParseError) {
        self.init(
            transactionId: try fields.requiredString("transaction_id"),
            originalTransactionId: try fields.requiredString("original_transaction_id"),
            productId: try fields.requiredString("product_id"),
            quantity: try fields.int("quantity"),
            webOrderLineItemId: try fields.string("web_order_line_item_id"),
            subscriptionGroupIdentifier: try fields.string("subscription_group_identifier"),
            purchaseDate: try fields.date("purchase_date_ms"),
            originalPurchaseDate: try fields.date("original_purchase_date_ms"),
            expiresDate: try fields.date("expires_date_ms"),
            cancellationDate: try fields.date("cancellation_date_ms"),
            cancellationReason: try fields.int("cancellation_reason"),
            isUpgraded: try fields.bool("is_upgraded") ?? false,
            isTrialPeriod: try fields.bool("is_trial_period") ?? false,
            isInIntroOfferPeriod: try fields.bool("is_in_intro_offer_period") ?? false,
            inAppOwnershipType: try fields.string("in_app_ownership_type"),
            offerCodeRefName: try fields.string("offer_code_ref_name"),
            promotionalOfferId: try fields.string("promotional_offer_id"),
            appAccountToken: try fields.string("app_account_token")
        )
    }
}
