/// Why the run's items were selected (`summary.json` key `selection`): items per due reason, and the
/// sweep's plan and what it found, shown apart from the due window (docs/reports.md).
public struct SelectionSummary: Sendable, Equatable, Codable {
    /// The `due_reason` of the sweep's items.
    public static let sweepReason = DueReason.sweep.rawValue

    /// Items per `reconciliation_items.due_reason` (`unverified`, `window`, `revoked`, `notification`,
    /// `sweep`, `backfill`; `(unknown)` for items written before the column existed), each with its
    /// outcomes and new states, the shape of `by_product`.
    public var byDueReason: [RunSummary.GroupCounts]
    /// The sweep; nil when the run planned none (a backfill, `--sweep-days 0`, an older run).
    public var sweep: Sweep?

    /// The sweep of a nightly run (docs/architecture.md, "The sweep").
    public struct Sweep: Sendable, Equatable, Codable {
        /// Verified, non-revoked subscriptions when the sweep started.
        public var eligible: Int
        /// How many of them it was to take: ceil(eligible / `--sweep-days`).
        public var quota: Int
        /// Items it selected (fewer than `quota` when the rest were verified recently or already due).
        public var selected: Int
        /// Of those, items whose row changed (a refund, an auto-renew change, ... the window would have missed).
        public var changed: Int

        public init(eligible: Int, quota: Int, selected: Int, changed: Int) {
            self.eligible = eligible
            self.quota = quota
            self.selected = selected
            self.changed = changed
        }
    }

    public init(byDueReason: [RunSummary.GroupCounts], sweep: Sweep?) {
        self.byDueReason = byDueReason
        self.sweep = sweep
    }

    enum CodingKeys: String, CodingKey {
        case byDueReason = "by_due_reason"
        case sweep
    }

    /// Writes `sweep` as `null` when there is none, so the key is always present.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(byDueReason, forKey: .byDueReason)
        try c.encode(sweep, forKey: .sweep)
    }
}
