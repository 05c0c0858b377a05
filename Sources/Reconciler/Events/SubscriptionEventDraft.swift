import Foundation

/// One event of a change, before it is written (`SubscriptionTransitions` makes it, `EventOutbox` writes it with
/// the change): what changed and what is known of it at Apple.
public struct SubscriptionEventDraft: Sendable, Equatable {
    public var kind: SubscriptionEventKind
    /// Why, where the kind has a reason (an expiration's, a refund's; docs/events.md, "Reasons").
    public var reason: String?
    /// Apple's transaction behind the change, its price (milliunits) and currency, when known.
    public var transactionId: String?
    public var priceMilliunits: Int64?
    public var currency: String?
    /// When it happened at Apple, when known.
    public var occurredAt: Date?

    public init(
        _ kind: SubscriptionEventKind,
        reason: String? = nil,
        transactionId: String? = nil,
        priceMilliunits: Int64? = nil,
        currency: String? = nil,
        occurredAt: Date? = nil
    ) {
        self.kind = kind
        self.reason = reason
        self.transactionId = transactionId
        self.priceMilliunits = priceMilliunits
        self.currency = currency
        self.occurredAt = occurredAt
    }
}
