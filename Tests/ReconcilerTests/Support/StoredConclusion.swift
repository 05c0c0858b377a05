import CivilTime
import Foundation
import Postgres

/// What one decision path leaves for a subscription, in terms both sides of a parity test read into: what
/// `explain` prints and what a run wrote (docs/decision-rules.md, "Precedence": `explain` prints exactly what
/// the run would store).
struct StoredConclusion: Equatable, CustomStringConvertible {
    enum Ending: String, Equatable {
        /// A decision was written (the row's entitlement values below).
        case stored
        /// The answer was refused for this receipt: nothing about entitlement changes.
        case rejected
        /// Nothing is known: the row is left as it was, due again.
        case unresolved
        /// The run stops as a configuration error.
        case configurationError = "configuration_error"
    }

    /// The row's entitlement columns, named as `explain` prints them.
    static let storedKeys = [
        "state", "expires_at", "product_id", "latest_transaction_id", "auto_renew", "auto_renew_product_id",
        "expiration_intent", "grace_period_expires_at", "in_billing_retry", "is_trial", "is_intro_offer",
        "revoked_at", "cancellation_reason", "environment", "app_account_token", "app_transaction_id",
        "price_increase_status", "renewal_price_milliunits", "renewal_currency", "renewal_billing_plan_type",
    ]

    var ending: Ending
    /// The reason's code (`VerdictReason.Code`), for every ending but `stored`.
    var code: String?
    /// For `stored`: each of `storedKeys` as text (dates RFC 3339), absent where null.
    var values: [String: String] = [:]

    var description: String {
        let shown = Self.storedKeys.compactMap { key in values[key].map { "\(key)=\($0)" } }
        return ([ending.rawValue] + (code.map { [$0] } ?? []) + shown).joined(separator: " ")
    }

    /// The code a stored reason starts with (`"shared_secret_mismatch: ..."`).
    static func code(ofStoredReason reason: String?) -> String? {
        reason.flatMap { $0.split(separator: ":", maxSplits: 1).first.map(String.init) }
    }

    /// Subscription `id` as the run left it: the item's outcome and reason, and the row's values when the item
    /// was decided.
    static func read(subscription id: Int64, from connection: PostgresConnection) throws -> StoredConclusion? {
        guard
            let item = try connection.queryFirst(
                "SELECT outcome, reason FROM reconciliation_items WHERE subscription_id = $1",
                [id]
            ), let outcome = try item.decode("outcome", as: String?.self)
        else { return nil }
        let code = Self.code(ofStoredReason: try item.decode("reason", as: String?.self))
        switch outcome {
        case "rejected": return StoredConclusion(ending: .rejected, code: code)
        case "unresolved": return StoredConclusion(ending: .unresolved, code: code)
        case "conflict", "no_app": return StoredConclusion(ending: .unresolved, code: outcome)
        default: break
        }
        guard let row = try connection.queryFirst("SELECT * FROM subscriptions WHERE id = $1", [id]) else {
            return nil
        }
        var values: [String: String] = [:]
        for key in [
            "state", "product_id", "latest_transaction_id", "auto_renew_product_id", "environment", "app_account_token",
            "app_transaction_id", "renewal_currency", "renewal_billing_plan_type",
        ] {
            values[key] = try row.decode(key, as: String?.self)
        }
        for key in ["expires_at", "grace_period_expires_at", "revoked_at"] {
            values[key] = try row.decode(key, as: Date?.self).map(RFC3339.string)
        }
        for key in ["auto_renew", "in_billing_retry", "is_trial", "is_intro_offer"] {
            values[key] = try row.decode(key, as: Bool?.self).map { String($0) }
        }
        for key in ["expiration_intent", "cancellation_reason", "price_increase_status", "renewal_price_milliunits"] {
            values[key] = try row.decode(key, as: Int64?.self).map { String($0) }
        }
        return StoredConclusion(ending: .stored, values: values)
    }
}
