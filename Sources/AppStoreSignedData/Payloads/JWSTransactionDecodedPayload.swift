import Foundation

/// A signed transaction (`signedTransactionInfo`, `signedTransactions[]`), every field Apple documents.
///
/// Dates are `Date` (Apple sends milliseconds since the epoch); `price` and `revocationPercentage` are in
/// milliunits (1990 = 1.99; 50000 = 50%). Enumerations stay as Apple's strings and numbers so a value
/// added next year still decodes. Unknown fields are ignored.
public struct JWSTransactionDecodedPayload: SignedPayload, Equatable {
    public var originalTransactionId: String?
    public var transactionId: String?
    public var webOrderLineItemId: String?
    public var bundleId: String?
    public var productId: String?
    public var subscriptionGroupIdentifier: String?
    public var purchaseDate: Date?
    public var originalPurchaseDate: Date?
    public var expiresDate: Date?
    public var quantity: Int?
    /// `Auto-Renewable Subscription`, `Non-Consumable`, `Consumable`, `Non-Renewing Subscription`.
    public var type: String?
    public var appAccountToken: String?
    /// `PURCHASED` or `FAMILY_SHARED`.
    public var inAppOwnershipType: String?
    public var signedDate: Date?
    /// 0 other, 1 an issue in the app.
    public var revocationReason: Int?
    public var revocationDate: Date?
    public var isUpgraded: Bool?
    /// 1 introductory, 2 promotional, 3 offer code, 4 win-back.
    public var offerType: Int?
    public var offerIdentifier: String?
    public var environment: String?
    public var storefront: String?
    public var storefrontId: String?
    /// `PURCHASE` or `RENEWAL`.
    public var transactionReason: String?
    /// Milliunits of `currency`.
    public var price: Int64?
    /// ISO 4217.
    public var currency: String?
    /// `FREE_TRIAL`, `PAY_AS_YOU_GO`, `PAY_UP_FRONT`, `ONE_TIME`.
    public var offerDiscountType: String?
    public var appTransactionId: String?
    /// ISO 8601 duration of the offer (`P1M`).
    public var offerPeriod: String?
    /// `REFUND_FULL`, `REFUND_PRORATED`, `FAMILY_REVOKE`.
    public var revocationType: String?
    /// Milliunits of a percent refunded (prorated refunds).
    public var revocationPercentage: Int64?
    /// How the customer pays a commitment plan (App Store Server API 1.21).
    public var billingPlanType: String?

    public init() {}

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        originalTransactionId = try c.string("originalTransactionId")
        transactionId = try c.string("transactionId")
        webOrderLineItemId = try c.string("webOrderLineItemId")
        bundleId = try c.string("bundleId")
        productId = try c.string("productId")
        subscriptionGroupIdentifier = try c.string("subscriptionGroupIdentifier")
        purchaseDate = try c.date("purchaseDate")
        originalPurchaseDate = try c.date("originalPurchaseDate")
        expiresDate = try c.date("expiresDate")
        quantity = try c.int("quantity")
        type = try c.string("type")
        appAccountToken = try c.string("appAccountToken")
        inAppOwnershipType = try c.string("inAppOwnershipType")
        signedDate = try c.date("signedDate")
        revocationReason = try c.int("revocationReason")
        revocationDate = try c.date("revocationDate")
        isUpgraded = try c.bool("isUpgraded")
        offerType = try c.int("offerType")
        offerIdentifier = try c.string("offerIdentifier")
        environment = try c.string("environment")
        storefront = try c.string("storefront")
        storefrontId = try c.string("storefrontId")
        transactionReason = try c.string("transactionReason")
        price = try c.int64("price")
        currency = try c.string("currency")
        offerDiscountType = try c.string("offerDiscountType")
        appTransactionId = try c.string("appTransactionId")
        offerPeriod = try c.string("offerPeriod")
        revocationType = try c.string("revocationType")
        revocationPercentage = try c.int64("revocationPercentage")
        billingPlanType = try c.string("billingPlanType")
    }

    public func checkClaims(_ options: SignedDataVerifier.Options) throws(SignedDataError) {
        try Self.check(
            bundleId: bundleId,
            environment: environment,
            appAppleId: nil,
            against: options,
            checksAppAppleId: false
        )
    }
}
