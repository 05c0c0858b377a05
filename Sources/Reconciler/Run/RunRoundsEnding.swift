import Logging
import Postgres

/// How a process's rounds of the pipeline ended, for `RunCoordination.finish`.
struct RunRoundsEnding {
    let run: JoinedRun
    /// Every round's results; its stop reason the last round's.
    let total: ReconciliationPipeline.Result
    /// Why the process was asked to stop (a signal, the lost lock, the run ended elsewhere), nil if it was not.
    let stopRequested: String?
    let preparation: RunPreparation
    let work: PostgresConnection
    let control: PostgresConnection
    let logger: Logger
}
