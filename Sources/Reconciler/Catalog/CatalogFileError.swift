/// A price catalog file that cannot be loaded: each problem names the file, the line and the field
/// (`catalog.csv line 4: price: "9.999" has more decimal places than USD's minor unit (2)`). Nothing is loaded
/// when there is one (exit 64).
public struct CatalogFileError: Error, Sendable, Equatable, CustomStringConvertible, ExitCodeProviding {
    /// One problem: its physical line (0 when it concerns the whole file), the column, and what is wrong.
    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        public var line: Int
        public var field: String?
        public var message: String

        public init(line: Int, field: String?, message: String) {
            self.line = line
            self.field = field
            self.message = message
        }

        public var description: String {
            (line > 0 ? "line \(line): " : "") + (field.map { "\($0): " } ?? "") + message
        }
    }

    /// The file as named on the command line.
    public var file: String
    public var problems: [Problem]

    public init(file: String, problems: [Problem]) {
        self.file = file
        self.problems = problems
    }

    /// At most this many problems are listed.
    static let shown = 20

    public var description: String {
        var lines = problems.prefix(Self.shown).map { "\(file) \($0)" }
        if problems.count > Self.shown { lines.append("\(file): ... and \(problems.count - Self.shown) more") }
        lines.append("\(file): \(problems.count) problem(s); nothing was loaded")
        return lines.joined(separator: "\n")
    }

    public var exitCode: ReconcilerExitCode { .usage }
}
