import ReceiptDomain

/// The vocabularies reports group by (outcomes, states, transaction kinds), in display order.
///
/// The lists come from the enums that define the values (`ItemOutcome`, `SubscriptionState`,
/// `LedgerEntry.Kind`); reports keep the stored strings so a value they do not know yet is still counted
/// and shown, never dropped.
public enum ReportOutcome {
    /// Every outcome of `reconciliation_items.outcome`, in display order.
    public static let all = ItemOutcome.allCases.map(\.rawValue)
    /// Outcomes that go to errors.csv.
    public static let errors: Set<String> = Set([ItemOutcome.unresolved, .rejected, .conflict].map(\.rawValue))
    /// Subscription states, in display order.
    public static let states = SubscriptionState.allCases.map(\.rawValue)
    /// Ledger transaction kinds, in display order.
    public static let kinds = LedgerEntry.Kind.allCases.map(\.rawValue)
    /// The label used for a missing product, group or state.
    public static let unknown = "(unknown)"
    /// The label used for pending items (no outcome yet).
    public static let pending = "pending"
}
