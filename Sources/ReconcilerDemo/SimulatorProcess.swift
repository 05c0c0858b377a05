import CivilTime
import Foundation
import Reconciler

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

/// The App Store simulator (`appstore-simulator`) run as a child process on loopback: for the demo,
/// the end-to-end tests and the benchmarks. The shared secret goes to it through the environment,
/// never its arguments. Its initializer, `stop()` and `export` wait for the child: call them from a thread of
/// their own (the demo's main thread; the tests' `OffPool`), never from one of the cooperative pool's
/// (`BackgroundChild`).
public final class SimulatorProcess: Sendable {
    public let port: Int
    public let sharedSecret: String
    private let child: BackgroundChild
    private let directory: URL

    public var processIdentifier: Int32 { child.processIdentifier }
    /// `http://127.0.0.1:PORT`: the Server API's and App Store Connect's base URL.
    public var baseURL: String { "http://127.0.0.1:\(port)" }
    public var productionURL: String { "http://127.0.0.1:\(port)/verifyReceipt" }
    public var sandboxURL: String { "http://127.0.0.1:\(port)/sandbox/verifyReceipt" }

    /// Starts `binary serve` with `arguments` (seed, population, faults...) and waits until it listens on a free
    /// port. Never a port asked for by number: one just freed may already be another process's (a client's
    /// connection to PostgreSQL takes its local port from the same range).
    public init(
        binary: String,
        arguments: [String],
        sharedSecret: String,
        logFile: String? = nil
    )
        throws
    {
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw ConfigurationError("simulator binary not found or not executable: \(binary)")
        }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("sim-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let portFile = directory.appendingPathComponent("port").path
        var environment = ProcessInfo.processInfo.environment
        environment["APPSTORE_SIM_SHARED_SECRET"] = sharedSecret
        let log = logFile ?? directory.appendingPathComponent("simulator.log").path
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        // Standard output and error both appended to the log.
        let output = try FileDescriptor.open(log, .writeOnly, options: [.append, .closeOnExec])
        let errors = try FileDescriptor.open(log, .writeOnly, options: [.append, .closeOnExec])
        child = try BackgroundChild(
            binary,
            ["serve", "--port", "0", "--port-file", portFile] + arguments,
            environment: environment,
            output: output,
            errors: errors
        )
        self.sharedSecret = sharedSecret
        let deadline = Date().addingTimeInterval(60)
        var found: Int?
        while Date() < deadline {
            let exited = child.hasExited
            if let text = try? String(contentsOfFile: portFile, encoding: .utf8),
                let value = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)), value > 0
            {
                found = value
                break
            }
            if exited { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        guard let found else {
            child.signal(SIGKILL)
            let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            try? FileManager.default.removeItem(at: directory)
            throw ConfigurationError("the simulator did not start: \(output.suffix(2000))")
        }
        port = found
    }

    /// Stops the simulator (SIGTERM, then SIGKILL after 5 s) and waits for its end: its port is free again.
    public func stop() {
        child.signal(SIGTERM)
        if !child.waitForExit(seconds: 5) {
            child.signal(SIGKILL)
            child.waitForExit(seconds: 60)
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// Sends `signal` unless the simulator has ended, and returns at once (its end is seen and reaped in the
    /// background).
    public func signal(_ signal: Int32) {
        child.signal(signal)
    }

    /// Killed with SIGKILL if still running, without waiting: a task of swift-subprocess sees its end and reaps it.
    deinit {
        child.signal(SIGKILL)
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs `binary export` into `directory` (purchases.jsonl, truth.jsonl) and waits for its end.
    public static func export(
        binary: String,
        seed: UInt64,
        subscriptions: Int,
        now: Date,
        into directory: String,
        extra: [String] = []
    ) throws {
        let errorFile = FileManager.default.temporaryDirectory.appendingPathComponent("export-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: errorFile) }
        let options: FileDescriptor.OpenOptions = [.create, .truncate, .closeOnExec]
        let errors = try FileDescriptor.open(errorFile.path, .writeOnly, options: options, permissions: .ownerReadWrite)
        let export = try BackgroundChild(
            binary,
            [
                "export", "--seed", String(seed), "--subscriptions", String(subscriptions), "--now",
                RFC3339.string(now),
                "--out", directory,
            ] + extra,
            environment: ProcessInfo.processInfo.environment,
            output: try FileDescriptor.open("/dev/null", .writeOnly, options: [.closeOnExec]),
            errors: errors
        )
        export.waitForExit()
        guard case .exited(0) = export.terminationStatus else {
            let output = (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
            throw ConfigurationError(
                "appstore-simulator export failed (\(export.terminationStatus.map { "\($0)" } ?? "end not seen")): \(output.suffix(2000))"
            )
        }
    }
}
