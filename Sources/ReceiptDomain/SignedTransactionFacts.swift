import Foundation

/// What a transaction signed by the App Store Server API says beyond a verifyReceipt transaction: its
/// price, currency and storefront, the offer, the refund's type and share, the reason of the purchase, and
/// the signed transaction itself (kept in the ledger as evidence). verifyReceipt transactions have none.
/// See docs/decision-rules.md, "The App Store Server API".
public struct SignedTransactionFacts: Sendable, Equatable {
    /// The price the customer paid, in milliunits of `currency` (9990 = 9.99; 1500000 = 1,500 yen).
    public var priceMilliunits: Int64?
    /// ISO 4217 code.
    public var currency: String?
    /// ISO 3166-1 alpha-3 storefront code.
    public var storefront: String?
    /// 1 introductory, 2 promotional, 3 offer code, 4 win-back.
    public var offerType: Int?
    /// FREE_TRIAL, PAY_AS_YOU_GO, PAY_UP_FRONT.
    public var offerDiscountType: String?
    /// REFUND_FULL or REFUND_PRORATED, when refunded.
    public var revocationType: String?
    /// The refunded share in milliunits of a percent (45000 = 45%), when refunded.
    public var revocationPercentage: Int64?
    /// PURCHASE or RENEWAL.
    public var transactionReason: String?
    /// Production or Sandbox, as signed.
    public var environment: AppleEnvironment?
    /// The compact JWS the facts were verified from.
    public var signedTransaction: String?
    /// The offer's identifier (a promotional offer's id, an offer code's reference name, a win-back offer's id).
    public var offerIdentifier: String?
    /// The offer's duration (ISO 8601, `P1M`), API 1.15.
    public var offerPeriod: String?
    /// The app's own id for the customer, set at purchase (a UUID).
    public var appAccountToken: String?
    /// The customer's app transaction id (one per customer and app), API 1.15.
    public var appTransactionId: String?
    /// The transaction's billing plan (API 1.21: `MONTHLY_COMMITMENT_12` for a monthly plan with a 12-month
    /// commitment).
    public var billingPlanType: String?

    public init(
        priceMilliunits: Int64? = nil,
        currency: String? = nil,
        storefront: String? = nil,
        offerType: Int? = nil,
        offerDiscountType: String? = nil,
        revocationType: String? = nil,
        revocationPercentage: Int64? = nil,
        transactionReason: String? = nil,
        environment: AppleEnvironment? = nil,
        signedTransaction: String? = nil,
        offerIdentifier: String? = nil,
        offerPeriod: String? = nil,
        appAccountToken: String? = nil,
        appTransactionId: String? = nil,
        billingPlanType: String? = nil
    ) {
        self.priceMilliunits = priceMilliunits
        self.currency = currency
        self.storefront = storefront
        self.offerType = offerType
        self.offerDiscountType = offerDiscountType
        self.revocationType = revocationType
        self.revocationPercentage = revocationPercentage
        self.transactionReason = transactionReason
        self.environment = environment
        self.signedTransaction = signedTransaction
        self.offerIdentifier = offerIdentifier
        self.offerPeriod = offerPeriod
        self.appAccountToken = appAccountToken
        self.appTransactionId = appTransactionId
        self.billingPlanType = billingPlanType
    }
}
