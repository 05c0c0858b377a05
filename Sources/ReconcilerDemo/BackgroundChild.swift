import Dispatch
import Foundation
import Subprocess
import Synchronization

#if canImport(System)
import System
#else
import SystemPackage
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process started from synchronous code with swift-subprocess (docs/testing.md, "One command"):
/// `Subprocess.run` runs in a task of its own, which spawns the child with none of this process's descriptors
/// but its standard input (/dev/null), output and error, sees its exit through its pidfd (so a killed child is
/// always seen, whatever other children hold) and reaps it. The caller waits for the exit from its own thread,
/// never from one of the cooperative pool's, which that task needs.
final class BackgroundChild: Sendable {
    let processIdentifier: pid_t
    private let state: State

    /// The spawn's result, then the exit's; the group is left once the child has been reaped.
    private final class State: Sendable {
        let spawned = Mutex<Result<pid_t, any Error>?>(nil)
        let status = Mutex<TerminationStatus?>(nil)
        let started = DispatchSemaphore(value: 0)
        let ended = DispatchGroup()
    }

    /// Starts `executable` with `arguments` and `environment` (the whole of it) and returns once it is spawned.
    /// Its standard output goes to `output`, its standard error to `errors`; both are closed here once the child has
    /// them.
    init(
        _ executable: String,
        _ arguments: [String],
        environment: [String: String],
        output: FileDescriptor,
        errors: FileDescriptor
    ) throws {
        let configuration = Configuration(
            executable: .path(FilePath(executable)),
            arguments: Arguments(arguments),
            environment: .custom(
                Dictionary(uniqueKeysWithValues: environment.map { (Environment.Key(stringLiteral: $0), $1) })
            )
        )
        let state = State()
        state.ended.enter()
        // Not a child task: the process outlives this initializer, and the task that awaits its exit with it.
        Task {
            defer { state.ended.leave() }
            do {
                let result = try await Subprocess.run(
                    configuration,
                    input: .none,
                    output: .fileDescriptor(output, closeAfterSpawningProcess: true),
                    error: .fileDescriptor(errors, closeAfterSpawningProcess: true)
                ) { execution in
                    state.spawned.withLock { $0 = .success(execution.processIdentifier.value) }
                    state.started.signal()
                }
                state.status.withLock { $0 = result.terminationStatus }
            } catch {
                // Before the spawn the initializer throws it; after, the end is not known (no status).
                let unspawned = state.spawned.withLock { spawned in
                    guard spawned == nil else { return false }
                    spawned = .failure(error)
                    return true
                }
                if unspawned { state.started.signal() }
            }
        }
        state.started.wait()
        processIdentifier = try state.spawned.withLock { $0! }.get()
        self.state = state
    }

    /// True once the child has ended and been reaped.
    var hasExited: Bool { state.ended.wait(timeout: .now()) == .success }

    /// How it ended (nil while it runs, or if its end could not be observed).
    var terminationStatus: TerminationStatus? { state.status.withLock { $0 } }

    /// Waits (this thread) until the child has ended or `seconds` have passed; true if it has ended.
    @discardableResult
    func waitForExit(seconds: Double) -> Bool {
        state.ended.wait(timeout: .now() + seconds) == .success
    }

    /// Waits (this thread) until the child has ended.
    func waitForExit() {
        state.ended.wait()
    }

    /// Sends `signal` unless the child has ended.
    func signal(_ signal: Int32) {
        if !hasExited { kill(processIdentifier, signal) }
    }
}
