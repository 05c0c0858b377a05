import Postgres

/// What preparing a run does (`RunCoordination.prepare`): read notification history, then scan the selection into
/// items, on the process's connections; the coordination decides who does it and under which lock.
struct RunPreparationSteps {
    let run: JoinedRun
    let work: PostgresConnection
    let control: PostgresConnection
    /// Reads notification history (docs/architecture.md, "Notification history"); why it failed, or nil.
    let readNotifications: () throws -> String?

    /// The scan, resumed from its stored cursor (a no-op once complete); the subscriptions it selected.
    func scan() throws -> Int {
        try RunScanner(connection: work, runId: run.id, asOf: run.asOf).scan(run.parameters.selection)
    }
}
