/// An error that knows which process exit code it stands for.
public protocol ExitCodeProviding: Error {
    var exitCode: ReconcilerExitCode { get }
}

extension ConfigurationError: ExitCodeProviding {
    public var exitCode: ReconcilerExitCode { .configuration }
}
