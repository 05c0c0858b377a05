#if canImport(Glibc)
import Glibc
#endif

/// What a finished child process left: how it ended and what it printed.
public struct ChildProcessOutcome: Sendable, CustomStringConvertible {
    /// How a process ended: `status` is its exit code, or the signal that ended it.
    public enum Reason: Sendable {
        case exit
        case uncaughtSignal
    }

    public var status: Int32
    public var reason: Reason
    public var stdout: String
    public var stderr: String

    public init(status: Int32, reason: Reason, stdout: String, stderr: String) {
        self.status = status
        self.reason = reason
        self.stdout = stdout
        self.stderr = stderr
    }

    public var killedBySIGKILL: Bool { reason == .uncaughtSignal && status == SIGKILL }
    public var description: String {
        "exit \(status) (\(reason == .exit ? "exit" : "signal")); stderr: \(stderr.suffix(1500))"
    }
}
