/// A problem that makes a whole import file unusable (cannot be opened, CSV header missing
/// required columns or unreadable), naming the file and the problem.
public struct ImportFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of problem.
    public enum Code: String, Sendable, Equatable {
        case cannotOpen
        case missingHeader
        case malformedHeader
        case missingColumns
        case duplicateColumns
        case readFailed
    }

    /// The file as the caller named it (a path, or e.g. `<stdin>`).
    public let file: String
    public let code: Code
    /// What is wrong, e.g. `missing required columns: expires_at, user_id`.
    public let problem: String
    /// For `missingColumns` / `duplicateColumns`: the column names concerned, sorted.
    public let columns: [String]

    public init(file: String, code: Code, problem: String, columns: [String] = []) {
        self.file = file
        self.code = code
        self.problem = problem
        self.columns = columns
    }

    public var description: String { "\(file): \(problem)" }
}
