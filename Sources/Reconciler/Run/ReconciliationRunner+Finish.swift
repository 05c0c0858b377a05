import Foundation
import Logging
import Postgres

extension ReconciliationRunner {
    /// Finishes the run (status, exit code, counts and requests stored; `RunEnding` decides them), then records the
    /// day's trend snapshot when it completed. Only a run still running is finished, and by one process: `fence`, the
    /// resume count a one-process run took it with, makes a run another process took over throw
    /// `RunOwnershipLostError`; a worker (no fence) that finds it finished throws `RunFinishedElsewhereError`.
    func finishRun(_ ending: RunRoundsEnding, stats: AppleRequestStats, fence: Int64?) throws -> Summary {
        let (run, connection, logger) = (ending.run, ending.work, ending.logger)
        let records = RunRecords(connection: connection)
        let counts = try records.itemCounts(runId: run.id)
        let decided = RunEnding.decide(
            runId: run.id,
            stopReason: ending.total.stopReason,
            counts: counts,
            maxUnresolvedFraction: run.parameters.options.maxUnresolvedFraction,
            notificationFailure: ending.preparation.notificationFailure
        )
        let stored = RunRecords.Ending(
            status: decided.status,
            exitCode: decided.exitCode,
            message: decided.message,
            stats: stats,
            items: counts
        )
        guard try records.finish(runId: run.id, stored, resumeCount: fence) else {
            if fence != nil { throw RunOwnershipLostError(runId: run.id) }
            throw RunFinishedElsewhereError(runId: run.id)
        }
        if decided.status == .completed, !run.parameters.options.dryRun {
            recordTrendSnapshot(runId: run.id, connection: connection, logger: logger)
            pruneItems(run, connection: connection, logger: logger)
        }
        let outcomes = counts.outcomes.map { "\($0.key.rawValue)=\($0.value)" }.sorted()
        let line =
            "run \(run.id) \(decided.status): \(counts.done)/\(counts.due) items, \(outcomes.joined(separator: " "))"
        if decided.exitCode == .success {
            let rate = String(format: "%.1f", stats.achievedRate)
            logger.info("\(line); \(stats.requests) Apple requests at \(rate)/s")
        } else {
            logger.error("\(line). \(decided.message ?? "")")
        }
        return Summary(
            runId: run.id,
            status: decided.status,
            exitCode: decided.exitCode,
            dryRun: run.parameters.options.dryRun,
            asOf: run.asOf,
            due: counts.due,
            done: counts.done,
            pending: counts.pending,
            outcomes: counts.outcomes,
            stats: stats,
            message: decided.message
        )
    }

    /// The day's trend snapshot, right after the run completed (docs/reports.md, "Trends across nights"). A failure is
    /// logged and leaves the run completed: `report --trends --rebuild` recomputes the day.
    private func recordTrendSnapshot(runId: Int64, connection: PostgresConnection, logger: Logger) {
        do {
            if let day = try TrendSnapshotWriter(connection: connection).record(runId: runId) {
                logger.info("run \(runId) trend snapshot \(day.date): \(day.rows) rows")
            }
        } catch {
            logger.error(
                "run \(runId): the trend snapshot was not recorded (\(error)); `renewal-reconciler report --trends --rebuild` recomputes it"
            )
        }
    }

    /// The items' retention, after the day's snapshot folded what it needs (docs/operations.md, "Retention"). A
    /// failure is logged and leaves the run completed: the next run or `renewal-reconciler prune` prunes them.
    private func pruneItems(_ run: JoinedRun, connection: PostgresConnection, logger: Logger) {
        let days = run.parameters.options.itemRetentionDays
        do {
            if let pruned = try ItemRetention(days: days).pruneIfDue(connection, now: run.asOf),
                pruned.items > 0
            {
                logger.info(
                    "run \(run.id) pruned \(pruned.items) item(s) of \(pruned.runs) run(s) older than \(days) days"
                )
            }
        } catch {
            logger.error(
                "run \(run.id): items older than \(days) days were not pruned (\(error)); the next run or `renewal-reconciler prune` prunes them"
            )
        }
    }
}
