/// How a run ends, decided from why its pipeline stopped and its items' counts (docs/operations.md, "Exit codes"):
/// the status stored, the exit code and the message that says what to do next.
struct RunEnding: Equatable, Sendable {
    let status: RunStatus
    let exitCode: ReconcilerExitCode
    let message: String?

    static func decide(
        runId: Int64,
        stopReason: ReconciliationPipeline.StopReason?,
        counts: RunRecords.ItemCounts,
        maxUnresolvedFraction: Double,
        notificationFailure: String?
    ) -> RunEnding {
        let pending = counts.pending
        switch stopReason {
        case .configuration(let why)?:
            return RunEnding(
                status: .failed,
                exitCode: .configuration,
                message: "stopped early: Apple reports a configuration error (\(why)); check the shared secret, "
                    + "the In-App Purchase key and ids, and the URLs"
            )
        case .database(let why)?:
            return RunEnding(
                status: .failed,
                exitCode: .failure,
                message: "database error: \(why); finished items are saved, resume with `run --resume \(runId)`"
            )
        case .tlsRefused(let why)?:
            return RunEnding(
                status: .failed,
                exitCode: .configuration,
                message: "stopped early: \(why); \(pending) items pending (rows untouched); resume with "
                    + "`run --resume \(runId)` once HTTPS to Apple works"
            )
        case .appleUnreachable(let why)?:
            return RunEnding(
                status: .partial,
                exitCode: .appleUnavailable,
                message: "\(why); \(pending) items pending (rows untouched); resume with `run --resume \(runId)` "
                    + "once Apple answers again"
            )
        case .interrupted(let why)?:
            return RunEnding(
                status: .interrupted,
                exitCode: .failure,
                message: "interrupted (\(why)) with \(pending) items pending; resume with `run --resume \(runId)`"
            )
        case nil:
            return ranOut(runId: runId, counts: counts, maxUnresolvedFraction, notificationFailure)
        }
    }

    /// A run whose pipeline ran out of items: done, unless items are left, too many stayed unresolved or the
    /// notification history could not be read.
    private static func ranOut(
        runId: Int64,
        counts: RunRecords.ItemCounts,
        _ maxUnresolvedFraction: Double,
        _ notificationFailure: String?
    ) -> RunEnding {
        let (due, unresolved) = (counts.due, counts.unresolved)
        if counts.pending > 0 {
            return RunEnding(
                status: .interrupted,
                exitCode: .failure,
                message: "\(counts.pending) items still pending; resume with `run --resume \(runId)`"
            )
        }
        if due > 0, Double(unresolved) / Double(due) > maxUnresolvedFraction {
            return RunEnding(
                status: .partial,
                exitCode: .unresolvedAboveThreshold,
                message: "\(unresolved) of \(due) items unresolved (above --max-unresolved "
                    + "\(maxUnresolvedFraction * 100)%); they stay due for the next run"
            )
        }
        if let notificationFailure {
            return RunEnding(
                status: .partial,
                exitCode: .unresolvedAboveThreshold,
                message: "\(notificationFailure); the next run reads those notifications again"
            )
        }
        return RunEnding(status: .completed, exitCode: .success, message: nil)
    }
}
