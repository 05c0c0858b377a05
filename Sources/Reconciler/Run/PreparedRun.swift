import Foundation

/// The run a process works, once created or resumed (`ReconciliationRunner.prepareRun`; a worker also joins one): its id, the parameters it
/// was started with (a resumed run keeps its own) and its as-of instant.
struct PreparedRun: Sendable {
    let id: Int64
    let parameters: RunParameters
    let asOf: Date
}
