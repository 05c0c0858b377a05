/// How a run ends, decided from why its pipeline stopped and its items' counts (docs/operations.md, "Exit codes"):
/// the status stored, the exit code and the message that says what to do next.
struct RunEnding: Equatable, Sendable {
    let status: RunStatus
    let exitCode: ReconcilerExitCode
    let message: String?

    init(status: RunStatus, exitCode: ReconcilerExitCode, message: String?) {
        (self.status, self.exitCode, self.message) = (status, exitCode, message)
    }

    private init(_ status: RunStatus, _ exitCode: ReconcilerExitCode, _ message: String) {
        self.init(status: status, exitCode: exitCode, message: message)
    }

    static func decide(
        runId: Int64,
        stopReason: ReconciliationPipeline.StopReason?,
        counts: RunRecords.ItemCounts,
        maxUnresolvedFraction: Double,
        notificationFailure: String?
    ) -> RunEnding {
        let (pending, resume) = (counts.pending, "resume with `run --resume \(runId)`")
        switch stopReason {
        case .configuration(let why)?:
            let check = "check the shared secret, the In-App Purchase key and ids, and the URLs"
            return RunEnding(
                .failed,
                .configuration,
                "stopped early: Apple reports a configuration error (\(why)); \(check)"
            )
        case .database(let why)?:
            return RunEnding(.failed, .failure, "database error: \(why); finished items are saved, \(resume)")
        case .tlsRefused(let why)?:
            let left = "\(pending) items pending (rows untouched)"
            return RunEnding(
                .failed,
                .configuration,
                "stopped early: \(why); \(left); \(resume) once HTTPS to Apple works"
            )
        case .appleUnreachable(let why)?:
            let left = "\(pending) items pending (rows untouched)"
            return RunEnding(.partial, .appleUnavailable, "\(why); \(left); \(resume) once Apple answers again")
        case .interrupted(let why)?:
            return RunEnding(.interrupted, .failure, "interrupted (\(why)) with \(pending) items pending; \(resume)")
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
            let left = "\(counts.pending) items still pending"
            return RunEnding(.interrupted, .failure, "\(left); resume with `run --resume \(runId)`")
        }
        if due > 0, Double(unresolved) / Double(due) > maxUnresolvedFraction {
            let bound = "above --max-unresolved \(maxUnresolvedFraction * 100)%"
            let why = "\(unresolved) of \(due) items unresolved (\(bound))"
            return RunEnding(.partial, .unresolvedAboveThreshold, "\(why); they stay due for the next run")
        }
        if let notificationFailure {
            let why = "\(notificationFailure); the next run reads those notifications again"
            return RunEnding(.partial, .unresolvedAboveThreshold, why)
        }
        return RunEnding(status: .completed, exitCode: .success, message: nil)
    }
}
