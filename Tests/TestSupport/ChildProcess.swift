import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A child process the tests start and then await, never block on (docs/testing.md, "One command"): its exit
/// arrives through `Process.terminationHandler` and resumes the awaiting task, and its standard output and error
/// go to files read once it has ended, so no thread of the test process waits on it or on a pipe while it runs.
/// Swift Testing runs the tests on the cooperative pool, one thread per core: a test that blocked a thread for a
/// child's lifetime starved every other test of the process.
public final class ChildProcess: @unchecked Sendable {
    // @unchecked Sendable: `process` is only asked processIdentifier, isRunning and the termination fields after
    // the exit (which Foundation allows from any thread); `exit` is Sendable.
    public let process: Process
    private let outFile: URL
    private let errFile: URL
    private let removeFiles: Bool
    private let exit = Exit()

    /// Whether the process has ended, and the tasks awaiting that; shared with the termination handler.
    private final class Exit: Sendable {
        struct State {
            var exited = false
            var exitedAt: ContinuousClock.Instant?
            var waiters: [CheckedContinuation<Void, Never>] = []
        }
        let state = Mutex(State())
    }

    /// Starts `executable` with `arguments`. `environment` nil: this process's. Output files go to `directory`
    /// (kept, beside the test's other files) or, when nil, to the temporary directory (removed after the exit).
    /// `standardInput` nil: /dev/null.
    public init(
        _ executable: String,
        _ arguments: [String],
        environment: [String: String]? = nil,
        directory: URL? = nil,
        workingDirectory: URL? = nil,
        standardInput: Any? = nil
    ) throws {
        let id = UUID().uuidString
        let folder = directory ?? FileManager.default.temporaryDirectory
        removeFiles = directory == nil
        outFile = folder.appendingPathComponent("out-\(id).txt")
        errFile = folder.appendingPathComponent("err-\(id).txt")
        guard FileManager.default.createFile(atPath: outFile.path, contents: nil),
            FileManager.default.createFile(atPath: errFile.path, contents: nil)
        else { throw ChildProcessError("cannot create output files in \(folder.path)") }
        let out = try FileHandle(forWritingTo: outFile)
        let err = try FileHandle(forWritingTo: errFile)
        // The child has its own copies once started; the parent's are closed either way.
        defer {
            try? out.close()
            try? err.close()
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = arguments
        if let environment { p.environment = environment }
        if let workingDirectory { p.currentDirectoryURL = workingDirectory }
        p.standardInput = standardInput ?? FileHandle.nullDevice
        p.standardOutput = out
        p.standardError = err
        // Set before the start, so an exit that comes at once is not missed.
        p.terminationHandler = { [exit] _ in
            let waiters = exit.state.withLock { s in
                s.exited = true
                s.exitedAt = .now
                defer { s.waiters = [] }
                return s.waiters
            }
            for waiter in waiters { waiter.resume() }
        }
        process = p
        try p.run()
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
        var inputHandle: FileHandle?
        if let input {
            // A file, not a pipe: nothing has to write while the child reads.
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("in-\(UUID().uuidString).txt")
            try input.write(to: file)
            inputHandle = try FileHandle(forReadingFrom: file)
            try? FileManager.default.removeItem(at: file)
        }
        defer { try? inputHandle?.close() }
        return try await ChildProcess(
            executable,
            arguments,
            environment: environment,
            directory: directory,
            workingDirectory: workingDirectory,
            standardInput: inputHandle
        ).outcome(limit: limit)
    }

    public var processIdentifier: Int32 { process.processIdentifier }

    /// True once the process has ended and its termination was seen.
    public var hasExited: Bool { exit.state.withLock { $0.exited } }

    /// When the end was seen (by Foundation's termination handler, not by a test task that may resume later).
    public var exitedAt: ContinuousClock.Instant? { exit.state.withLock { $0.exitedAt } }

    /// Sends `signal` unless the process has ended.
    public func signal(_ signal: Int32) {
        if !hasExited { kill(process.processIdentifier, signal) }
    }

    /// Awaits the end of the process (no limit).
    public func exited() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = exit.state.withLock { s in
                if !s.exited { s.waiters.append(continuation) }
                return s.exited
            }
            if done { continuation.resume() }
        }
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
        let out = (try? String(contentsOf: outFile, encoding: .utf8)) ?? ""
        let err = (try? String(contentsOf: errFile, encoding: .utf8)) ?? ""
        if removeFiles {
            try? FileManager.default.removeItem(at: outFile)
            try? FileManager.default.removeItem(at: errFile)
        }
        return ChildProcessOutcome(
            status: process.terminationStatus,
            reason: process.terminationReason,
            stdout: out,
            stderr: err
        )
    }
}
