import Foundation

/// What a finished child process left: how it ended and what it printed.
public struct ChildProcessOutcome: Sendable, CustomStringConvertible {
    public var status: Int32
    public var reason: Process.TerminationReason
    public var stdout: String
    public var stderr: String

    public init(status: Int32, reason: Process.TerminationReason, stdout: String, stderr: String) {
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
