/// Why subscriptions ended, which offers customers took and whether they stayed, and how customers answered a
/// price increase: the night's `churn`, `offers` and `price_increase` in summary.json and their sections of
/// report.html (docs/reports.md, "Churn, offers and price increases"). Folded one item and one transaction at a
/// time, like the rest of `RunSummaryAccumulator`.
public struct ChurnAndOffers: Sendable, Equatable, Codable {
    /// Offers of one type: how many started in the period and how many converted to a paid, full-price renewal.
    public struct OfferCounts: Sendable, Equatable, Codable {
        public var started = 0
        public var converted = 0

        public init(started: Int = 0, converted: Int = 0) {
            self.started = started
            self.converted = converted
        }
    }

    /// The run's answers to price increases (Apple's `priceIncreaseStatus`, docs/decision-rules.md, "What the row
    /// keeps beside the entitlement").
    public struct PriceIncrease: Sendable, Equatable, Codable {
        /// Entitled subscriptions whose customer has not yet consented to a price increase that needs consent (0).
        public var awaitingConsent = 0
        /// Entitled subscriptions that consented or needed no consent (1).
        public var consented = 0
        /// Subscriptions that lapsed because the customer did not consent (expiration intent 3).
        public var lapsedDeclined = 0
        /// Per product: awaiting consent.
        public var awaitingConsentByProduct: [String: Int] = [:]

        enum CodingKeys: String, CodingKey {
            case awaitingConsent = "awaiting_consent"
            case consented
            case lapsedDeclined = "lapsed_declined"
            case awaitingConsentByProduct = "awaiting_consent_by_product"
        }
    }

    /// Apple's expiration intents by name, in display order, then the label for a lapse Apple gave no reason for.
    public static let reasons = [
        (1, "customer_cancelled"), (2, "billing_error"), (3, "declined_price_increase"), (4, "product_unavailable"),
        (5, "other"),
    ]
    public static let unknownReason = "unknown"
    /// Offer types by name, in display order (Apple's `offerType`; 0 is this project's: a verifyReceipt offer code
    /// or promotional offer, which that API does not tell apart).
    public static let offerTypes = [
        (1, "introductory"), (2, "promotional"), (3, "offer_code"), (4, "win_back"), (0, "offer_unknown_type"),
    ]

    /// Subscriptions that lapsed in the run (entitled before, not after), by Apple's expiration intent.
    public var churnByReason = Dictionary(uniqueKeysWithValues: (reasons.map(\.1) + [unknownReason]).map { ($0, 0) })
    public var offers = Dictionary(uniqueKeysWithValues: offerTypes.map { ($0.1, OfferCounts()) })
    public var priceIncrease = PriceIncrease()

    public init() {}

    public static func reasonName(_ intent: Int?) -> String {
        intent.flatMap { intent in reasons.first { $0.0 == intent }?.1 } ?? unknownReason
    }

    static func offerName(_ type: Int?) -> String? {
        type.flatMap { type in offerTypes.first { $0.0 == type }?.1 }
    }

    /// Counts one item: a lapse by its reason, an entitled subscription's price-increase answer.
    mutating func add(_ item: ReportItem) {
        guard item.status == .done, !item.isError else { return }
        if item.outcome == ItemOutcome.lapsed.rawValue {
            churnByReason[Self.reasonName(item.expirationIntent), default: 0] += 1
            if item.expirationIntent == 3 { priceIncrease.lapsedDeclined += 1 }
        }
        guard item.newState == "active" || item.newState == "grace_period" else { return }
        switch item.priceIncreaseStatus {
        case 0?:
            priceIncrease.awaitingConsent += 1
            priceIncrease.awaitingConsentByProduct[item.groupingProductId, default: 0] += 1
        case 1?:
            priceIncrease.consented += 1
        default:
            break
        }
    }

    /// Counts one ledger transaction: an offer started in the period (its previous transaction had no offer of the
    /// same type), a conversion (a paid, full-price renewal of the period right after an offer).
    mutating func add(_ transaction: ReportTransaction) {
        // A family member's copy is the purchaser's offer, counted once on the purchaser's transaction.
        guard !transaction.isFamilyShared else { return }
        if transaction.purchaseScope == .period, let name = Self.offerName(transaction.offerType),
            transaction.previousOfferType != transaction.offerType
        {
            offers[name, default: OfferCounts()].started += 1
        }
        if transaction.isPaidRenewalInRun, transaction.offerType == nil,
            let name = Self.offerName(transaction.previousOfferType)
        {
            offers[name, default: OfferCounts()].converted += 1
        }
    }

    enum CodingKeys: String, CodingKey {
        case churnByReason = "churn_by_reason"
        case offers
        case priceIncrease = "price_increase"
    }
}
