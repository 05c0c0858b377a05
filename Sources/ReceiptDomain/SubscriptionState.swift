/// A subscription's entitlement state at a point in time, as stored in the database.
///
/// `active` and `gracePeriod` grant access; the others do not. Raw values are the database spelling.
public enum SubscriptionState: String, Sendable, Hashable, CaseIterable, Codable {
    case active = "active"
    case gracePeriod = "grace_period"
    case billingRetry = "billing_retry"
    case expired = "expired"
    case revoked = "revoked"

    /// Whether the customer is entitled to the service in this state.
    public var isEntitled: Bool { self == .active || self == .gracePeriod }
}
