/// An error that knows which process exit code it stands for.
public protocol ExitCodeProviding: Error {
    var exitCode: ReconcilerExitCode { get }
}

extension ConfigurationError: ExitCodeProviding {
    public var exitCode: ReconcilerExitCode { .configuration }
}

/// Bad input given by the user (a file, an id list, a flag value the parser could not judge): exit 64.
public struct UsageError: Error, CustomStringConvertible, ExitCodeProviding, Sendable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
    public var exitCode: ReconcilerExitCode { .usage }
}

/// Maps any error to the documented exit code: the error's own when it has one, else 1 (failure).
public enum ReconcilerErrorClassifier {
    public static func exitCode(for error: any Error) -> ReconcilerExitCode {
        (error as? any ExitCodeProviding)?.exitCode ?? .failure
    }
}
