/// Whether the pipeline may send the next request to Apple: consulted before every send window opens
/// (docs/architecture.md, "The run lock"). A run sends only while it still holds its run lock.
public protocol SendGate: AnyObject, Sendable {
    /// Asked on the pipeline's queue before each send; must answer at once (no database call).
    func sendPermission() -> SendPermission
}

/// A `SendGate`'s answer.
public enum SendPermission: Sendable, Equatable {
    /// Send.
    case go
    /// Hold the sends (the lock could not be confirmed lately: the database is unreachable); ask again later.
    case wait
    /// The run lost its lock to another process: stop at once, unfinished items stay pending.
    case lost(String)
}
