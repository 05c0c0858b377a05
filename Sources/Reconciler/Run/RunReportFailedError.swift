/// A run's report folder or metrics file could not be written after its work was stored: the run is recorded
/// `failed` (docs/operations.md, "Reports that cannot be written"). Exit 1.
public struct RunReportFailedError: Error, CustomStringConvertible, ExitCodeProviding, Sendable {
    public let runId: Int64
    /// The report error (it names the path and the cause).
    public let reason: String

    public var description: String {
        "run \(runId): its work is stored but its report could not be written (\(reason)); the run is recorded "
            + "failed: `renewal-reconciler run --resume \(runId)` writes the report once the folder is writable"
    }

    public var exitCode: ReconcilerExitCode { .failure }
}
