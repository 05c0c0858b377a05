import Foundation

/// The run a process works, once it created, resumed or joined it (`RunCoordination.enter`), and what the process
/// holds of its row.
struct JoinedRun: Sendable {
    let prepared: PreparedRun
    /// Whether this process reads notification history before the scan: a one-process run always (the cursor makes a
    /// second read of the same night cheap); of a worker run's workers, the one that created the run.
    let readsNotifications: Bool
    /// The `resume_count` the process took the run with (fencing every batch) and the requests the run's earlier
    /// sessions counted (docs/architecture.md, "The run lock").
    let ownership: RunOwnership

    var id: Int64 { prepared.id }
    /// The parameters the run was started with (a resumed or joined run keeps its own).
    var parameters: RunParameters { prepared.parameters }
    var asOf: Date { prepared.asOf }
}
