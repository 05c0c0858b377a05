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
#endif

/// A child process the tests start and then await, never block on (docs/testing.md, "One command"). It is run by
/// swift-subprocess in a task of its own: spawned with none of the test process's descriptors but its standard
/// input, output and error, its exit seen through its pidfd and reaped by that task, which then resumes the tasks
/// awaiting it. Its standard output and error go to files read once it has ended, so no thread of the test process
/// waits on it or on a pipe while it runs. Swift Testing runs the tests on the cooperative pool, one thread per core:
/// a test that blocked a thread for a child's lifetime starved every other test of the process.
public final class ChildProcess: Sendable {
    public let processIdentifier: Int32
    /// The files its standard output and error go to (read them while it runs to see what it printed so far).
    public let outputFile: URL
    public let errorFile: URL
    private let removeFiles: Bool
    private let exit: Exit

    /// How the process ended, when it has, and the tasks awaiting that; shared with the task that runs it.
    private final class Exit: Sendable {
        struct State {
            var status: TerminationStatus?
            /// Why no status is known (swift-subprocess could not monitor the process).
            var failure: String?
            var exitedAt: ContinuousClock.Instant?
            var waiters: [CheckedContinuation<Void, Never>] = []
        }
        let state = Mutex(State())

        func finish(_ status: TerminationStatus?, failure: String? = nil) {
            let waiters = state.withLock { s in
                s.status = status
                s.failure = failure
                s.exitedAt = .now
                defer { s.waiters = [] }
                return s.waiters
            }
            for waiter in waiters { waiter.resume() }
        }

        var exited: Bool { state.withLock { $0.exitedAt != nil } }

        func wait() async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let done = state.withLock { s in
                    if s.exitedAt == nil { s.waiters.append(continuation) }
                    return s.exitedAt != nil
                }
                if done { continuation.resume() }
            }
        }
    }

    /// Starts `executable` with `arguments` and returns once it is spawned. `environment` nil: this process's.
    /// Output files go to `directory` (kept, beside the test's other files) or, when nil, to the temporary directory
    /// (removed after the exit). `standardInput` (closed here once the child has it) nil: /dev/null.
    public init(
        _ executable: String,
        _ arguments: [String],
        environment: [String: String]? = nil,
        directory: URL? = nil,
        workingDirectory: URL? = nil,
        standardInput: FileDescriptor? = nil
    ) async throws {
        let id = UUID().uuidString
        let folder = directory ?? FileManager.default.temporaryDirectory
        removeFiles = directory == nil
        outputFile = folder.appendingPathComponent("out-\(id).txt")
        errorFile = folder.appendingPathComponent("err-\(id).txt")
        // Close-on-exec like every descriptor here: only the child's own copies on 0, 1 and 2 outlive the spawn.
        let options: FileDescriptor.OpenOptions = [.create, .truncate, .closeOnExec]
        let input = try standardInput ?? FileDescriptor.open("/dev/null", .readOnly, options: [.closeOnExec])
        var files: [FileDescriptor] = []
        do {
            for file in [outputFile, errorFile] {
                files.append(
                    try FileDescriptor.open(file.path, .writeOnly, options: options, permissions: .ownerReadWrite)
                )
            }
        } catch {
            for file in files + [input] { try? file.close() }
            throw ChildProcessError("cannot create output files in \(folder.path): \(error)")
        }
        let (output, errors) = (files[0], files[1])
        let configuration = Configuration(
            executable: .path(FilePath(executable)),
            arguments: Arguments(arguments),
            environment: environment.map { values in
                .custom(Dictionary(uniqueKeysWithValues: values.map { (Environment.Key(stringLiteral: $0), $1) }))
            } ?? .inherit,
            workingDirectory: workingDirectory.map { FilePath($0.path) }
        )
        let exit = Exit()
        self.exit = exit
        processIdentifier = try await withCheckedThrowingContinuation { started in
            // Not a child task: the process outlives this initializer, and the task that awaits its exit with it.
            Task {
                let spawned = Mutex(false)
                do {
                    let result = try await Subprocess.run(
                        configuration,
                        input: .fileDescriptor(input, closeAfterSpawningProcess: true),
                        output: .fileDescriptor(output, closeAfterSpawningProcess: true),
                        error: .fileDescriptor(errors, closeAfterSpawningProcess: true)
                    ) { execution in
                        spawned.withLock { $0 = true }
                        started.resume(returning: execution.processIdentifier.value)
                    }
                    exit.finish(result.terminationStatus)
                } catch {
                    if spawned.withLock({ $0 }) {
                        exit.finish(nil, failure: "\(error)")
                    } else {
                        started.resume(throwing: error)
                    }
                }
            }
        }
    }

    /// Starts the process, with `input` (when given) as its standard input, and awaits its outcome (see `init`
    /// and `outcome(limit:)`).
    public static func run(
        _ executable: String,
        _ arguments: [String],
        environment: [String: String]? = nil,
        directory: URL? = nil,
        workingDirectory: URL? = nil,
        input: Data? = nil,
        limit: Duration = .seconds(1800)
    ) async throws -> ChildProcessOutcome {
        var standardInput: FileDescriptor?
        if let input {
            // A file, not a pipe: nothing has to write while the child reads.
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("in-\(UUID().uuidString).txt")
            try input.write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            standardInput = try FileDescriptor.open(file.path, .readOnly, options: [.closeOnExec])
        }
        return try await ChildProcess(
            executable,
            arguments,
            environment: environment,
            directory: directory,
            workingDirectory: workingDirectory,
            standardInput: standardInput
        ).outcome(limit: limit)
    }

    /// True once the process has ended and been reaped.
    public var hasExited: Bool { exit.exited }

    /// When the end was seen (by the task that runs the process, not by a test task that may resume later).
    public var exitedAt: ContinuousClock.Instant? { exit.state.withLock { $0.exitedAt } }

    /// Sends `signal` unless the process has ended.
    public func signal(_ signal: Int32) {
        if !hasExited { kill(processIdentifier, signal) }
    }

    /// Awaits the end of the process (no limit).
    public func exited() async {
        await exit.wait()
    }

    /// Awaits the end of the process (killed with SIGKILL after `limit`, a safety net) and returns its outcome.
    public func outcome(limit: Duration = .seconds(1800)) async -> ChildProcessOutcome {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.exited() }
            group.addTask {
                guard (try? await Task.sleep(for: limit)) != nil else { return }
                self.signal(SIGKILL)
            }
            await group.next()
            group.cancelAll()
        }
        await exited()
        let out = (try? String(contentsOf: outputFile, encoding: .utf8)) ?? ""
        var err = (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
        if removeFiles {
            try? FileManager.default.removeItem(at: outputFile)
            try? FileManager.default.removeItem(at: errorFile)
        }
        let (status, failure) = exit.state.withLock { ($0.status, $0.failure) }
        if let failure { err += "\n(the process's end could not be observed: \(failure))" }
        switch status {
        case .exited(let code):
            return ChildProcessOutcome(status: code, reason: .exit, stdout: out, stderr: err)
        case .signaled(let signal):
            return ChildProcessOutcome(status: signal, reason: .uncaughtSignal, stdout: out, stderr: err)
        case nil:
            return ChildProcessOutcome(status: -1, reason: .exit, stdout: out, stderr: err)
        }
    }
}
