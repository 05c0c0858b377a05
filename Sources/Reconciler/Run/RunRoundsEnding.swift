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
    /// Whether the rounds were stopped because the run ended elsewhere (another worker completed it, or it failed
    /// for all): the process then exits as the run did.
    var runEndedElsewhere = false
}
