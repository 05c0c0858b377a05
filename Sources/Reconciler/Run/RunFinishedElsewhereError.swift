/// The run was no longer `running` when this process came to finish it: another process (a worker that took the
/// finish lock again after a database restart) finished it first. Nothing of this process's finish was written;
/// its reports are not written twice.
public struct RunFinishedElsewhereError: Error, CustomStringConvertible, ExitCodeProviding, Sendable {
    public let runId: Int64

    public var description: String {
        "run \(runId) was finished by another process meanwhile: `renewal-reconciler runs` shows how it ended"
    }

    public var exitCode: ReconcilerExitCode { .failure }
}
