/// How a decision compares with the stored row. Exactly one applies, checked in this order.
public enum DecisionOutcome: String, Sendable, Equatable, CaseIterable {
    /// The response was not usable for this row (non-0 status, bundle mismatch, subscription absent,
    /// no expiry). Nothing about entitlement may be updated; `Decision.rejectReason` says why.
    case rejected
    /// Now `revoked` and the stored state was not `revoked`.
    case revoked
    /// Now entitled (`active`/`grace_period`) and the stored state was `billing_retry`, `expired` or `revoked`.
    case recovered
    /// Now entitled and the expiry moved forward (or was unknown), from an entitled or unknown stored state.
    case renewed
    /// Now `expired`/`billing_retry` and the stored state was entitled or unknown (nil).
    case lapsed
    /// None of the above, but a stored field differs: state, expiry, product, auto-renew flag,
    /// auto-renew (pending) product, grace expiry, billing retry, expiration intent, environment,
    /// latest transaction id or revocation time.
    case changed
    /// Nothing the row stores differs.
    case unchanged
}
