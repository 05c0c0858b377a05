/// A run's status, as stored in `reconciliation_runs.status`: `running` while a process works on it,
/// then `completed`, `partial` (too many items unresolved), `failed` (resumable) or `interrupted`
/// (resumable; also set on a run whose process died).
public enum RunStatus: String, Sendable, Codable, CaseIterable, CustomStringConvertible {
    case running, completed, partial, failed, interrupted

    /// Whether `run --resume` may continue a run in this status.
    public var isResumable: Bool { self == .interrupted || self == .failed }

    public var description: String { rawValue }
}
