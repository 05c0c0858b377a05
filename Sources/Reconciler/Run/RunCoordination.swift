import Dispatch
import Logging
import Postgres

/// How a process takes part in a run: the one value in which a one-process run and a worker of a shared run differ
/// (docs/architecture.md, "One run path"). `ReconciliationRunner` runs the same sequence for both (lock, enter,
/// prepare, heartbeat, rounds of the pipeline, finish, reports) and asks the coordination at each step:
///
/// - `SoleCoordination` (`run`, `run --resume`, `backfill`): the run lock exclusive, a new run or a resumed one, one
///   round over every pending item, the run finished by this process.
/// - `WorkerCoordination` (`run --worker`): the run lock shared, the running worker run joined (or created), the scan
///   one worker at a time, items claimed in leased chunks round after round, the run finished by the worker that
///   finds nothing pending.
protocol RunCoordination: AnyObject, Sendable {
    /// How often the heartbeat runs (the first one runs at once).
    var heartbeatInterval: DispatchTimeInterval { get }

    /// Whether the run's progress is shown (`--progress`): a worker sees only its own part, so it stays quiet.
    var showsProgress: Bool { get }

    /// Takes the run lock on `lock` (held until that connection closes), without waiting: false when another process
    /// holds it the way this one cannot share.
    func takeRunLock(_ lock: PostgresConnection) throws -> Bool

    /// With the run lock held: creates, resumes or joins the run.
    func enter(_ request: ReconciliationRunner.Request, control: PostgresConnection) throws -> RunEntry

    /// The run's log lines carry this process's labels (the run's id is set already).
    func label(_ logger: inout Logger)

    /// Notification history (when this process reads it) and the scan.
    func prepare(_ steps: RunPreparationSteps) throws -> RunPreparation

    /// One heartbeat on the lock's connection (through the lock watch); may change the process's share or stop it.
    func beat(_ run: JoinedRun, _ connection: PostgresConnection, _ current: CurrentPipeline) throws

    /// Waits, if need be, until this process may send (a worker joining: the others lowered their shares).
    func beforeSending(_ run: JoinedRun, work: PostgresConnection, current: CurrentPipeline) throws

    /// Sets up a round's store: its fence, where its request counts go, and a worker's lease.
    func configure(_ store: RunStore, for run: JoinedRun, soFar: ReconciliationPipeline.Result)

    /// A round ended without a stop: records it and says whether another round has work (waiting if it must).
    func anotherRound(_ run: JoinedRun, soFar: ReconciliationPipeline.Result, work: PostgresConnection) throws -> Bool

    /// The rounds are over: leaves the run or finishes it; says whether this process writes the run's reports.
    func finish(_ ending: RunRoundsEnding) throws -> (ReconciliationRunner.Summary, writesReports: Bool)

    /// The run could not go on in this process (an error escaped the sequence): records what must be recorded.
    func abandon(_ run: JoinedRun, after error: any Error, control: PostgresConnection)

    /// What a signal makes the process do, as the log says it.
    func signalNotice(_ signal: String, run: JoinedRun) -> String
}
