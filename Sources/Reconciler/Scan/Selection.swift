import Foundation

/// Which subscriptions a run verifies. Stored with the run (`reconciliation_runs.parameters`) so that
/// `--resume` finishes the run exactly as planned.
///
/// Encoded as `{"due": {...}}` or `{"backfill": {"_0": {...}}}` (see `Selection+Codable.swift`): the shape
/// older builds stored, so a run started by one still resumes.
public enum Selection: Sendable, Equatable {
    /// The nightly default: rows never verified; rows not revoked with `expires_at` within
    /// [as_of - lookback, as_of + lookahead] and not verified in the last `minRecheck` seconds; and revoked
    /// rows the app changed since they were last verified, or last verified more than
    /// `max(recheckRevoked, minRecheck)` seconds ago (a customer can buy again after a refund).
    case due(
        lookaheadSeconds: Double,
        lookbackSeconds: Double,
        minRecheckSeconds: Double,
        recheckRevokedSeconds: Double = Selection.defaultRecheckRevokedSeconds
    )
    /// An explicit backfill selection; every given filter must hold (AND).
    case backfill(BackfillFilter)

    /// `--recheck-revoked` when not given, and for runs stored by builds that did not know it: 7 days.
    public static let defaultRecheckRevokedSeconds: Double = 7 * 86_400
}
