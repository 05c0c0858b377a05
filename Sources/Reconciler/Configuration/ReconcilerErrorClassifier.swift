/// Maps any error to the documented exit code: the error's own when it has one, else 1 (failure).
public enum ReconcilerErrorClassifier {
    public static func exitCode(for error: any Error) -> ReconcilerExitCode {
        (error as? any ExitCodeProviding)?.exitCode ?? .failure
    }
}
