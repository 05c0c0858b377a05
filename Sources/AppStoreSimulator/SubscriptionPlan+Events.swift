/// The 2026 additions to a plan (docs/simulator.md, "Offers, commitments, price increases, extensions"): offers
/// other than the introductory one, a win-back resubscription, renewal-date extensions, a price increase that
/// needs the customer's consent, and refund requests Apple asked the developer about.
extension SubscriptionPlan {
    /// A promotional offer (`offerType` 2) the customer redeemed while subscribed: transactions `firstIndex` ..<
    /// `firstIndex + count` are billed at the pay-as-you-go price (half the list price).
    public struct PromotionalOffer: Sendable {
        public var identifier: String
        public var firstIndex: Int
        public var count: Int
    }

    /// The customer lapsed (auto-renew off, expired) and came back at `at` with a win-back offer (`offerType` 4):
    /// a new purchase of `to` with the same original transaction id; its first `count` periods are billed at
    /// the pay-as-you-go price, then renewals continue at the list price.
    public struct WinBack: Sendable {
        public var at: Int64
        public var to: SimProduct
        public var offerIdentifier: String
        public var count: Int
    }

    /// Apple moved the expiry of the transaction current at `at` later by `days` (Extend a Subscription Renewal
    /// Date, or, with `requestIdentifier`, the mass extension of that request); later renewals follow.
    public struct Extension: Sendable {
        public var at: Int64
        public var days: Int64
        public var requestIdentifier: String?
    }

    /// A price increase that needs consent: announced at `announcedAt` (PRICE_INCREASE PENDING), effective for
    /// renewals on or after `effectiveAt` at 120% of the list price (`Storefront.raised`); the customer consented at
    /// `consentedAt` (PRICE_INCREASE ACCEPTED), or never did, and the subscription lapses at the first renewal
    /// on or after `effectiveAt` (expirationIntent 3, EXPIRED PRICE_INCREASE).
    public struct PriceIncrease: Sendable {
        public var announcedAt: Int64
        public var effectiveAt: Int64
        public var consentedAt: Int64?
    }

    /// A refund request Apple asked about (CONSUMPTION_REQUEST at `requestedAt`) for transaction `transactionIndex`;
    /// the outcome is the plan's refund of that transaction (REFUND) or, without one, `declinedAt` (REFUND_DECLINED);
    /// open while neither has happened.
    public struct RefundRequest: Sendable {
        public var transactionIndex: Int
        public var requestedAt: Int64
        public var declinedAt: Int64?
    }

    /// Outcome of a refund request at `now`: `refunded`, `declined` or `open`.
    public func outcome(of request: RefundRequest, at now: Int64) -> String {
        if refunds.contains(where: { $0.transactionIndex == request.transactionIndex && $0.at <= now }) {
            return "refunded"
        }
        if let declined = request.declinedAt, declined <= now { return "declined" }
        return "open"
    }
}
