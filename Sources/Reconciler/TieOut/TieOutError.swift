/// The tie-out could not read the database or write its files; the description names the table or the path, and the
/// exit status is the one docs/tie-out.md gives (1 the database, 78 an --out that cannot be written).
public struct TieOutError: Error, Sendable, Equatable, CustomStringConvertible, ExitCodeProviding {
    public var exitCode: ReconcilerExitCode
    public var message: String

    public init(_ exitCode: ReconcilerExitCode, _ message: String) {
        self.exitCode = exitCode
        self.message = message
    }

    /// A report file error (`ReportError`) as the tie-out's: a directory that cannot be written is a configuration
    /// error (78), as `--report-dir` is for a run.
    init(_ error: ReportError) {
        let code: ReconcilerExitCode = error.code == .database || error.code == .encoding ? .failure : .configuration
        self.init(code, "\(error.path ?? "?"): \(error.message)\(error.code == .diskFull ? " (file system full)" : "")")
    }

    public var description: String { "tie-out: \(message)" }
}
