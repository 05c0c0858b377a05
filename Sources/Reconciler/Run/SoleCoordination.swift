import Dispatch
import Logging
import Postgres

/// A run worked by one process (`run`, `run --resume`, `backfill`; docs/architecture.md, "One run path"): the run lock
/// taken exclusively, runs left `running` by a dead process marked interrupted, a new run created or an interrupted
/// one resumed, one round over every pending item, and the run finished here.
final class SoleCoordination: RunCoordination {
    private let runner: ReconciliationRunner

    init(runner: ReconciliationRunner) {
        self.runner = runner
    }

    let heartbeatInterval = DispatchTimeInterval.seconds(10)
    let showsProgress = true

    func takeRunLock(_ lock: PostgresConnection) throws -> Bool {
        try lock.tryAdvisoryLock(key: ReconciliationRunner.lockKey)
    }

    func enter(_ request: ReconciliationRunner.Request, control: PostgresConnection) throws -> RunEntry {
        try runner.markDeadRunsInterrupted(control)
        let prepared = try runner.prepareRun(request, control)
        let ownership = try RunRecords(connection: control).ownership(runId: prepared.id)
        return .work(
            JoinedRun(
                prepared: prepared,
                readsNotifications: true,
                ownership: ownership
            )
        )
    }

    func label(_ logger: inout Logger) {}

    func prepare(_ steps: RunPreparationSteps) throws -> RunPreparation {
        let failure = try steps.readNotifications()
        return RunPreparation(due: try steps.scan(), notificationFailure: failure)
    }

    func beat(_ run: JoinedRun, _ connection: PostgresConnection, _ current: CurrentPipeline) throws {
        try RunRecords(connection: connection).heartbeat(runId: run.id)
    }

    func beforeSending(_ run: JoinedRun, work: PostgresConnection, current: CurrentPipeline) throws {}

    func configure(_ store: RunStore, for run: JoinedRun, soFar: ReconciliationPipeline.Result) {
        store.ownerResumeCount = run.ownership.resumeCount
        store.statsTarget = .run(base: run.ownership.statsBase)
    }

    /// One round reads every pending item: when it ends without a stop, none is left.
    func anotherRound(_ run: JoinedRun, soFar: ReconciliationPipeline.Result, work: PostgresConnection) -> Bool {
        false
    }

    func finish(_ ending: RunRoundsEnding) throws -> (ReconciliationRunner.Summary, writesReports: Bool) {
        // The run's earlier sessions (a resumed run keeps counting), then this one's.
        var stats = ending.run.ownership.statsBase
        stats.merge(ending.total.stats)
        let summary = try runner.finishRun(ending, stats: stats, fence: ending.run.ownership.resumeCount)
        return (summary, true)
    }

    /// The run cannot go on (bad backfill selection, database gone for good, ...): recorded as failed, so it does not
    /// look alive and can be resumed.
    func abandon(_ run: JoinedRun, after error: any Error, control: PostgresConnection) {
        try? RunRecords(connection: control).fail(
            runId: run.id,
            exitCode: ReconcilerErrorClassifier.exitCode(for: error),
            error: String(describing: error),
            resumeCount: run.ownership.resumeCount
        )
    }

    func signalNotice(_ signal: String, run: JoinedRun) -> String {
        "received \(signal): finishing requests in flight, then stopping (resume with `run --resume \(run.id)`)"
    }
}
