import Foundation

/// Signed renewal information (`signedRenewalInfo`): what happens at the next renewal. Carries no
/// bundle id, so only the environment is checked. Unknown fields are ignored.
public struct JWSRenewalInfoDecodedPayload: SignedPayload, Equatable {
    /// 1 customer cancelled, 2 billing error, 3 declined a price increase, 4 product unavailable, 5 other.
    public var expirationIntent: Int?
    public var originalTransactionId: String?
    public var autoRenewProductId: String?
    public var productId: String?
    /// 1 on, 0 off.
    public var autoRenewStatus: Int?
    public var isInBillingRetryPeriod: Bool?
    /// 0 not yet responded, 1 consented or not required.
    public var priceIncreaseStatus: Int?
    public var gracePeriodExpiresDate: Date?
    public var offerType: Int?
    public var offerIdentifier: String?
    public var signedDate: Date?
    public var environment: String?
    public var recentSubscriptionStartDate: Date?
    public var renewalDate: Date?
    /// ISO 4217 currency of `renewalPrice`.
    public var currency: String?
    /// Milliunits.
    public var renewalPrice: Int64?
    public var offerDiscountType: String?
    public var offerPeriod: String?
    public var eligibleWinBackOfferIds: [String]?
    public var appAccountToken: String?
    public var appTransactionId: String?
    /// The billing plan of the next renewal (API 1.21): Apple names it `renewalBillingPlanType` in renewal info, where
    /// a transaction's is `billingPlanType` (docs/signed-data.md, section 2).
    public var renewalBillingPlanType: String?

    public init() {}

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        expirationIntent = try c.int("expirationIntent")
        originalTransactionId = try c.string("originalTransactionId")
        autoRenewProductId = try c.string("autoRenewProductId")
        productId = try c.string("productId")
        autoRenewStatus = try c.int("autoRenewStatus")
        isInBillingRetryPeriod = try c.bool("isInBillingRetryPeriod")
        priceIncreaseStatus = try c.int("priceIncreaseStatus")
        gracePeriodExpiresDate = try c.date("gracePeriodExpiresDate")
        offerType = try c.int("offerType")
        offerIdentifier = try c.string("offerIdentifier")
        signedDate = try c.date("signedDate")
        environment = try c.string("environment")
        recentSubscriptionStartDate = try c.date("recentSubscriptionStartDate")
        renewalDate = try c.date("renewalDate")
        currency = try c.string("currency")
        renewalPrice = try c.int64("renewalPrice")
        offerDiscountType = try c.string("offerDiscountType")
        offerPeriod = try c.string("offerPeriod")
        eligibleWinBackOfferIds = try c.value([String].self, "eligibleWinBackOfferIds")
        appAccountToken = try c.string("appAccountToken")
        appTransactionId = try c.string("appTransactionId")
        renewalBillingPlanType = try c.string("renewalBillingPlanType")
    }

    public func checkClaims(_ options: SignedDataVerifier.Options) throws(SignedDataError) {
        try Self.check(
            bundleId: nil,
            environment: environment,
            appAppleId: nil,
            against: options,
            checksBundle: false,
            checksAppAppleId: false
        )
    }
}
