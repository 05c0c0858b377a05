import CivilTime
import Foundation
import ReceiptDomain

/// A subscription's values an event shows before and after its change (`subscription_events.before`, `after`;
/// docs/events.md, "Payload"): state, expiry, product and auto-renew.
public struct SubscriptionSnapshot: Sendable, Equatable {
    public var state: SubscriptionState?
    public var expiresAt: Date?
    public var productId: String
    public var autoRenew: Bool?

    public init(state: SubscriptionState?, expiresAt: Date?, productId: String, autoRenew: Bool?) {
        self.state = state
        self.expiresAt = expiresAt
        self.productId = productId
        self.autoRenew = autoRenew
    }

    /// `{"auto_renew": true/false/null, "expires_at": RFC 3339 or null, "product_id": ..., "state": ...}`.
    public var json: String {
        func text(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
        return JSONValue.object([
            "state": text(state?.rawValue),
            "expires_at": text(expiresAt.map { RFC3339.string($0) }),
            "product_id": .string(productId),
            "auto_renew": autoRenew.map(JSONValue.bool) ?? .null,
        ]).jsonText
    }
}
