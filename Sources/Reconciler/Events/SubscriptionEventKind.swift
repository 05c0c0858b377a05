/// What changed in one event of the outbox (`subscription_events.kind`; docs/events.md, "Kinds"). The webhook's
/// type is `subscription.<raw value>`.
public enum SubscriptionEventKind: String, Sendable, CaseIterable, Codable {
    /// Entitled again after the subscription had expired or been revoked: a new purchase (a win-back, a
    /// resubscription).
    case purchase
    /// A new period charged while the subscription was active.
    case renewal
    case autoRenewOff = "auto_renew_off"
    case autoRenewOn = "auto_renew_on"
    /// Apple could not charge the renewal and no grace period applies: access ends, Apple keeps retrying.
    case billingIssue = "billing_issue"
    /// Apple could not charge the renewal; access continues in the billing grace period.
    case gracePeriod = "grace_period"
    /// A renewal charged after a billing issue or in the grace period.
    case recovery
    /// The subscription ended; `reason` says why.
    case expiration
    /// Now on another product of the group (an upgrade, a downgrade or crossgrade taking effect).
    case productChange = "product_change"
    /// Apple refunded the current period: access revoked.
    case refund
    /// Apple reversed a refund: access given back.
    case refundReversed = "refund_reversed"
    /// Access revoked without a refund (Family Sharing withdrawn).
    case revocation
    /// The customer accepted a price increase.
    case priceIncreaseConsent = "price_increase_consent"
    /// The expiry moved later without a new charge (a renewal-date extension).
    case `extension`
}
