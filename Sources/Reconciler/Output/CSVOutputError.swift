/// A CSV report file that could not be created or written, naming the file when known.
public struct CSVOutputError: Error, Sendable, Equatable, CustomStringConvertible {
    public let path: String?
    public let problem: String

    public init(path: String?, problem: String) {
        self.path = path
        self.problem = problem
    }

    public var description: String { (path.map { "\($0): " } ?? "CSV report: ") + problem }
}
