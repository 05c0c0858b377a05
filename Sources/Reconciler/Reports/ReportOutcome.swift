/// The vocabularies reports group by (outcomes, states, transaction kinds), in display order.
///
/// Kept as plain strings (as stored in PostgreSQL) so a value the reports do not know yet is still
/// counted and shown, never dropped.
public enum ReportOutcome {
    /// Every outcome of `reconciliation_items.outcome`, in display order.
    public static let all = [
        "renewed", "unchanged", "lapsed", "recovered", "revoked", "changed", "rejected", "unresolved", "conflict",
    ]
    /// Outcomes that go to errors.csv.
    public static let errors: Set<String> = ["unresolved", "rejected", "conflict"]
    /// Subscription states, in display order.
    public static let states = ["active", "grace_period", "billing_retry", "expired", "revoked"]
    /// Ledger transaction kinds, in display order.
    public static let kinds = ["initial", "renewal", "upgrade", "refund"]
    /// The label used for a missing product, group or state.
    public static let unknown = "(unknown)"
    /// The label used for pending items (no outcome yet).
    public static let pending = "pending"
}
