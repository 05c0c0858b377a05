/// A run's status, as stored in `reconciliation_runs.status`: `running` while a process works on it,
/// then `completed`, `partial` (too many items unresolved, or stopped because Apple was unreachable:
/// resumable while items are pending), `failed` (resumable) or `interrupted` (resumable; also set on a
/// run whose process died).
public enum RunStatus: String, Sendable, Codable, CaseIterable, CustomStringConvertible {
    case running, completed, partial, failed, interrupted

    /// Whether `run --resume` may continue a run in this status (`partial` only while it has pending
    /// items: an Apple outage stopped it).
    public func isResumable(pendingItems: Int) -> Bool {
        self == .interrupted || self == .failed || (self == .partial && pendingItems > 0)
    }

    public var description: String { rawValue }
}
