/// What one pull of notification history did (both environments, plus imported notifications claimed).
public struct NotificationPullSummary: Sendable, Equatable {
    /// Signed payloads read from Get Notification History.
    public var read = 0
    /// Notifications stored now (not stored before; always 0 in a dry run).
    public var stored = 0
    /// Notifications read that were stored before (the window's overlap, an earlier import).
    public var alreadyStored = 0
    /// Imported notifications this run took over (`first_seen_run_id` was NULL).
    public var importedClaimed = 0
    /// Items inserted into the run with `due_reason` `notification`.
    public var madeDue = 0
    /// Original transaction ids named by new notifications that have no subscription row (sorted, unique).
    public var unknownSubscriptions: [String] = []
    /// Payloads refused by verification, by reason (`bad_signature`, ...): not stored, not acted on.
    public var refused: [String: Int] = [:]
    /// Pages read.
    public var pages = 0
    /// Problems that did not fail the run (a sandbox that answered an error).
    public var warnings: [String] = []

    public init() {}

    /// One line for the log.
    public var line: String {
        var text =
            "notification history: \(read) read in \(pages) pages, \(stored) stored, \(alreadyStored) already stored"
        if importedClaimed > 0 { text += ", \(importedClaimed) imported taken over" }
        text += ", \(madeDue) subscriptions made due, \(unknownSubscriptions.count) unknown subscriptions"
        let refusedCount = refused.values.reduce(0, +)
        if refusedCount > 0 {
            text +=
                ", \(refusedCount) refused ("
                + refused.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ") + ")"
        }
        if !warnings.isEmpty { text += "; warnings: " + warnings.joined(separator: "; ") }
        return text
    }
}
