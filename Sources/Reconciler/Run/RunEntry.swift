/// What a process found when it came to run (`RunCoordination.enter`): a run to work, or a run that already ended
/// and leaves it nothing to do (a worker started after the night's worker run completed).
enum RunEntry {
    case work(JoinedRun)
    case nothingToDo(ReconciliationRunner.Summary)
}
