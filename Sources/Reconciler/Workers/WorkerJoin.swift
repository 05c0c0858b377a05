import Foundation

/// What a starting worker found (docs/architecture.md, "Workers"): the worker run it joined or created, or, with
/// none running, the worker run that already completed within `--join-window`.
enum WorkerJoin {
    case run(id: Int64, parameters: RunParameters, asOf: Date, created: Bool)
    case nothingToDo(completed: StoredRun)
}
