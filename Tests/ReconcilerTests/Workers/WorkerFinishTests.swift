import Foundation
import Logging
import Postgres
import TestSupport
import Testing

@testable import Reconciler

/// How a worker ends when its round was stopped (docs/architecture.md, "Workers"): a heartbeat that finds the run
/// completed by another worker (this one stalled and its chunks went to the others) ends it as the run did, exit 0;
/// a signal still leaves the run to the others with exit 1.
@Suite struct WorkerFinishTests {
    static func ending(
        _ world: StoreWorld,
        runId: Int64,
        stopRequested: String?,
        runEndedElsewhere: Bool
    ) -> RunRoundsEnding {
        let parameters = RunParameters.workersRun
        var total = ReconciliationPipeline.Result()
        total.stopReason = .interrupted(stopRequested ?? "the run ended (completed)")
        return RunRoundsEnding(
            run: JoinedRun(
                prepared: PreparedRun(id: runId, parameters: parameters, asOf: StoreWorld.asOf),
                readsNotifications: false,
                ownership: RunOwnership(resumeCount: 0, statsBase: AppleRequestStats())
            ),
            total: total,
            stopRequested: stopRequested,
            preparation: RunPreparation(due: 4),
            work: world.connection,
            control: world.connection,
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }),
            runEndedElsewhere: runEndedElsewhere
        )
    }

    @Test func aWorkerStoppedByTheRunsCompletionExitsAsTheRunDidAndOneStoppedBySIGTERMExits1() async throws {
        let (world, runId, _) = try WorkerLeaseTests.world(4)
        try world.connection.execute("UPDATE reconciliation_items SET status = 'done', outcome = 'unchanged'")
        try world.connection.execute("UPDATE reconciliation_runs SET status = 'completed'")
        let coordination = WorkerCoordination(
            runner: ReconciliationRunner(
                connectionString: world.database.url,
                logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
            ),
            settings: WorkerSettings(heartbeatSeconds: 1, leaseSeconds: 30)
        )
        // `finish` waits 1.1 s before it marks the worker stopped (its last sends leave Apple's window): off the pool,
        // on a thread of its own (the connection is used by one thread at a time).
        let completed = Self.ending(
            world,
            runId: runId,
            stopRequested: nil,
            runEndedElsewhere: true
        )
        let signalled = Self.ending(
            world,
            runId: runId,
            stopRequested: "SIGTERM",
            runEndedElsewhere: true
        )
        let ended = try await OffPool.run { try coordination.finish(completed).0 }
        #expect(ended.exitCode == .success)
        #expect(ended.status == .completed)
        let left = try await OffPool.run { try coordination.finish(signalled).0 }
        #expect(left.exitCode == .failure)
    }
}
