import Foundation

/// A report or metrics file could not be produced. The description names the run or the path and the
/// cause; it never contains receipts, secrets or connection strings.
public struct ReportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: Sendable, Equatable {
        /// No `reconciliation_runs` row with this id.
        case runNotFound
        /// The report or metrics directory (or a file in it) cannot be created or written: permissions, read-only.
        case notWritable
        /// The file system is full (ENOSPC) or over quota.
        case diskFull
        /// Reading the run from PostgreSQL failed.
        case database
        /// A value could not be encoded (a bug, reported instead of a half-written file).
        case encoding
    }

    public var code: Code
    /// The path involved, if any.
    public var path: String?
    public var message: String

    public init(_ code: Code, path: String? = nil, _ message: String) {
        self.code = code
        self.path = path
        self.message = message
    }

    public var description: String {
        switch code {
        case .runNotFound: return "report: \(message)"
        case .database: return "report: database: \(message)"
        case .notWritable, .diskFull, .encoding:
            let hint = code == .diskFull ? " (file system full)" : ""
            return "report: \(path ?? "?"): \(message)\(hint); the database is unchanged, regenerate later with "
                + "`renewal-reconciler report RUN_ID`"
        }
    }

    /// Maps an errno from a file operation on `path` to a report error.
    static func file(_ errorNumber: Int32, path: String, operation: String) -> ReportError {
        let reason = String(cString: strerror(errorNumber))
        let code: Code = (errorNumber == ENOSPC || errorNumber == EDQUOT) ? .diskFull : .notWritable
        return ReportError(code, path: path, "cannot \(operation): \(reason)")
    }
}

extension ReportError: ExitCodeProviding {
    public var exitCode: ReconcilerExitCode {
        if case .runNotFound = code { return .usage }
        return .failure
    }
}
