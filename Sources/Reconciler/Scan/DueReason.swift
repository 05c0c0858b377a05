/// Why a run selected a subscription (`reconciliation_items.due_reason`, docs/architecture.md "How a run
/// behaves"). The due scan's phases are the first four, in the order it runs them (`duePhases`).
public enum DueReason: String, Sendable, CaseIterable {
    /// Never verified.
    case unverified
    /// Expiring within the look-ahead, or expired within the look-back.
    case window
    /// Revoked, asked again on a schedule (a refunded customer can buy again).
    case revoked
    /// The least recently verified, about 1/`--sweep-days` a night.
    case sweep
    /// Named by an App Store Server Notification since the last run: the whole history is read again.
    case notification
    /// Chosen by a backfill's filters.
    case backfill

    /// The phases of the due scan, in order; the cursor stores the current one (`sweep` only when the selection's
    /// `sweepDays` is above 0).
    public static let duePhases: [DueReason] = [.unverified, .window, .revoked, .sweep]
}
