/// Bad input given by the user (a file, an id list, a flag value the parser could not judge): exit 64.
public struct UsageError: Error, CustomStringConvertible, ExitCodeProviding, Sendable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
    public var exitCode: ReconcilerExitCode { .usage }
}
