/// A batch (or the run's finish) found the run no longer this process's: another process marked it interrupted or
/// resumed it (a new `resume_count`) after this one lost its run lock, typically across a database restart
/// (docs/architecture.md, "The run lock"). Nothing of the refused write was stored.
public struct RunOwnershipLostError: Error, CustomStringConvertible, ExitCodeProviding, Sendable {
    public let runId: Int64

    public var description: String {
        "run \(runId) is no longer this process's (another process took the run lock and marked it interrupted or "
            + "resumed it): stopped without writing; `renewal-reconciler runs` shows who holds it"
    }

    public var exitCode: ReconcilerExitCode { .locked }
}
