/// What a starting worker found (docs/architecture.md, "Workers"): the worker run it joined or created, or, with
/// none running, the worker run that already completed within `--join-window`.
enum WorkerJoin {
    case run(JoinedRun, created: Bool)
    case nothingToDo(completed: StoredRun)
}
