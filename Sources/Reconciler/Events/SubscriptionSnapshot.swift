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

    /// `{"state": ..., "expires_at": RFC 3339 or null, "product_id": ..., "auto_renew": true/false/null}`, keys in
    /// that order.
    public var json: String {
        func text(_ value: String?) -> String { value.map(Self.quoted) ?? "null" }
        return "{\"state\": \(text(state?.rawValue)), \"expires_at\": \(text(expiresAt.map { RFC3339.string($0) })), "
            + "\"product_id\": \(Self.quoted(productId)), \"auto_renew\": \(autoRenew.map(String.init) ?? "null")}"
    }

    /// A JSON string literal.
    static func quoted(_ value: String) -> String {
        var out = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    out += String(format: "\\u%04x", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
