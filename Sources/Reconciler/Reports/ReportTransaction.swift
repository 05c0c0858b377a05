import Foundation

/// One ledger transaction that a run saw for the first time, or whose refund it saw
/// (`subscription_transactions`, or `dry_run_transactions` for a dry run).
public struct ReportTransaction: Sendable, Equatable {
    public var transactionId: String
    public var originalTransactionId: String
    public var productId: String
    public var subscriptionGroupId: String?
    /// `initial`, `renewal`, `upgrade` or `refund`.
    public var kind: String
    public var purchaseDate: Date?
    public var expiresDate: Date?
    public var isTrial: Bool
    public var isIntroOffer: Bool
    public var offer: String?
    public var cancellationDate: Date?
    public var cancellationReason: Int?
    /// Apple's `inAppOwnershipType`: `PURCHASED`, or `FAMILY_SHARED` for a family member's access through another
    /// person's purchase; nil when unknown (rows written before it was kept).
    public var ownershipType: String?
    /// The transaction entered the ledger in this run.
    public var firstSeenInRun: Bool
    /// Its refund (or revocation) was seen in this run.
    public var refundSeenInRun: Bool
    /// The transaction before it in the same subscription (by purchase date) was a free trial.
    public var previousWasTrial: Bool
    /// The transaction before it in the same subscription was an introductory offer.
    public var previousWasIntroOffer: Bool
    /// Price Apple signed (App Store Server API), milliunits of `currency` (9990 = 9.99); nil for
    /// verifyReceipt rows, which the products catalog prices.
    public var priceMilliunits: Int64?
    /// ISO 4217 code of `priceMilliunits`.
    public var currency: String?
    /// `REFUND_FULL` or `REFUND_PRORATED` when revoked (Server API rows).
    public var revocationType: String?
    /// Refunded share of a prorated refund, milliunits of a percent (45000 = 45%).
    public var revocationPercentage: Int64?
    /// Bought in the Sandbox: a test purchase, in the counts but never money (docs/reports.md, "Money per
    /// currency").
    public var isSandbox: Bool
    /// Where its purchase counts in this run's report (docs/reports.md, "The period"); nil: nowhere (a row
    /// listed only for its refund). Built in memory without one: the period when first seen in the run.
    public var purchaseScope: PeriodScope?
    /// Where its refund counts; nil: no refund counted in this run's report.
    public var refundScope: PeriodScope?
    /// Purchase date of the subscription's (original transaction id's) first paid, non-trial transaction: the
    /// start of its paid service, for the commission of estimated proceeds (docs/reports.md, "Estimated
    /// proceeds"); nil when unknown.
    public var firstPaidDate: Date?
    /// Apple's storefront (ISO 3166-1 alpha-3, `USA`) of a Server API row; nil for verifyReceipt rows.
    public var storefront: String?
    /// The currency the app stored for the transaction's subscription (`subscriptions.currency`), read for rows
    /// without a signed price: it chooses the catalog row that prices them (`CatalogPricing`); nil: unknown.
    public var subscriptionCurrency: String?
    /// Apple's `offerType` (1 introductory, 2 promotional, 3 offer code, 4 win-back; 0 a verifyReceipt offer code or
    /// promotional offer, which that API does not tell apart), nil without an offer; and the previous transaction's.
    /// Built from the flags (as for a verifyReceipt row) unless the loader sets the signed ones.
    public var offerType: Int?
    public var previousOfferType: Int?

    public init(
        transactionId: String,
        originalTransactionId: String,
        productId: String,
        subscriptionGroupId: String? = nil,
        kind: String,
        purchaseDate: Date? = nil,
        expiresDate: Date? = nil,
        isTrial: Bool = false,
        isIntroOffer: Bool = false,
        offer: String? = nil,
        cancellationDate: Date? = nil,
        cancellationReason: Int? = nil,
        ownershipType: String? = nil,
        firstSeenInRun: Bool = true,
        refundSeenInRun: Bool = false,
        previousWasTrial: Bool = false,
        previousWasIntroOffer: Bool = false,
        priceMilliunits: Int64? = nil,
        currency: String? = nil,
        revocationType: String? = nil,
        revocationPercentage: Int64? = nil,
        isSandbox: Bool = false,
        purchaseScope: PeriodScope? = nil,
        refundScope: PeriodScope? = nil,
        firstPaidDate: Date? = nil,
        storefront: String? = nil,
        subscriptionCurrency: String? = nil
    ) {
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.subscriptionGroupId = subscriptionGroupId
        self.kind = kind
        self.purchaseDate = purchaseDate
        self.expiresDate = expiresDate
        self.isTrial = isTrial
        self.isIntroOffer = isIntroOffer
        self.offer = offer
        self.cancellationDate = cancellationDate
        self.cancellationReason = cancellationReason
        self.ownershipType = ownershipType
        self.firstSeenInRun = firstSeenInRun
        self.refundSeenInRun = refundSeenInRun
        self.previousWasTrial = previousWasTrial
        self.previousWasIntroOffer = previousWasIntroOffer
        self.priceMilliunits = priceMilliunits
        self.currency = currency
        self.revocationType = revocationType
        self.revocationPercentage = revocationPercentage
        self.isSandbox = isSandbox
        self.purchaseScope = purchaseScope ?? (firstSeenInRun ? .period : nil)
        self.refundScope = refundScope ?? (refundSeenInRun ? .period : nil)
        self.firstPaidDate = firstPaidDate
        self.storefront = storefront
        self.subscriptionCurrency = subscriptionCurrency
        offerType = isTrial || isIntroOffer ? 1 : (offer == nil ? nil : 0)
        previousOfferType = previousWasTrial || previousWasIntroOffer ? 1 : nil
    }

    /// Apple signed its price (a Server API row): `MoneyByCurrency` values it, the catalog estimates do not.
    public var isLedgerPriced: Bool { priceMilliunits != nil && currency != nil }

    /// Counts as money (a ledger price or a catalog estimate): not a Sandbox test purchase, and not a family
    /// member's share of another person's purchase, whose money is the purchaser's transaction (docs/reports.md,
    /// "Money per currency").
    public var isMoney: Bool { !isSandbox && !isFamilyShared }

    /// A family member's access through another person's purchase (`FAMILY_SHARED`).
    public var isFamilyShared: Bool { ownershipType == "FAMILY_SHARED" }

    /// Revoked because the purchaser stopped sharing it with the family (`FAMILY_REVOKE`): an access ended, not a
    /// refund.
    public var isFamilyRevocation: Bool { revocationType == "FAMILY_REVOKE" }

    /// A paid renewal purchased in the run's period: what estimated renewal revenue counts (trials are free).
    public var isPaidRenewalInRun: Bool { purchaseScope == .period && kind == "renewal" && !isTrial }

    /// A paid transaction refunded in the run's period: what refunded amounts count.
    public var isPaidRefundInRun: Bool { refundScope == .period && !isTrial }

    /// A paid renewal following a free trial: a trial conversion.
    public var isTrialConversion: Bool { isPaidRenewalInRun && !isIntroOffer && previousWasTrial }

    /// A full-price renewal following an introductory offer: an intro-offer conversion.
    public var isIntroConversion: Bool { isPaidRenewalInRun && !isIntroOffer && previousWasIntroOffer }
}
