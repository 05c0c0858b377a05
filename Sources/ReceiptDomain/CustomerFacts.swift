/// What the app's other systems read about a subscription beyond its entitlement (App Store Server API 1.15 to
/// 1.21, docs/decision-rules.md, "What the row keeps beside the entitlement"): the app's own id for the customer,
/// Apple's app transaction id, the customer's answer to a price increase, and the next renewal's price, currency
/// and billing plan.
///
/// The ids identify the customer and never go away once known (a later answer without them keeps the stored
/// ones); the renewal terms are what Apple's latest renewal info says, nil when it says nothing (auto-renew off:
/// no next renewal).
public struct CustomerFacts: Sendable, Equatable {
    /// The UUID the app set at purchase (`appAccountToken`, `app_account_token` in verifyReceipt).
    public var appAccountToken: String?
    /// One per customer and app (`appTransactionId`, API 1.15).
    public var appTransactionId: String?
    /// `priceIncreaseStatus` (`price_consent_status` in verifyReceipt): 0 the customer has not answered a price
    /// increase that needs consent, 1 consented or none needed.
    public var priceIncreaseStatus: Int?
    /// The next renewal's price in milliunits of `renewalCurrency` (`renewalPrice`).
    public var renewalPriceMilliunits: Int64?
    /// ISO 4217 code of `renewalPriceMilliunits` (the renewal info's `currency`).
    public var renewalCurrency: String?
    /// The next renewal's billing plan (`renewalBillingPlanType`, API 1.21).
    public var renewalBillingPlanType: String?

    public init(
        appAccountToken: String? = nil,
        appTransactionId: String? = nil,
        priceIncreaseStatus: Int? = nil,
        renewalPriceMilliunits: Int64? = nil,
        renewalCurrency: String? = nil,
        renewalBillingPlanType: String? = nil
    ) {
        self.appAccountToken = appAccountToken
        self.appTransactionId = appTransactionId
        self.priceIncreaseStatus = priceIncreaseStatus
        self.renewalPriceMilliunits = renewalPriceMilliunits
        self.renewalCurrency = renewalCurrency
        self.renewalBillingPlanType = renewalBillingPlanType
    }

    /// The facts of an answer: the ids from the renewal info, else the transaction that gives the expiry; the terms
    /// from the renewal info alone.
    public init(renewal: PendingRenewalInfo?, source: ReceiptTransaction) {
        self.init(
            appAccountToken: renewal?.appAccountToken ?? source.appAccountToken ?? source.signedFacts?.appAccountToken,
            appTransactionId: renewal?.appTransactionId ?? source.signedFacts?.appTransactionId,
            priceIncreaseStatus: renewal?.priceConsentStatus,
            renewalPriceMilliunits: renewal?.renewalPriceMilliunits,
            renewalCurrency: renewal?.renewalPriceMilliunits == nil ? nil : renewal?.renewalCurrency,
            renewalBillingPlanType: renewal?.renewalBillingPlanType
        )
    }
}
