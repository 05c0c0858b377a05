import CivilTime
import Foundation
import Reconciler

/// The App Store simulator (`appstore-simulator`) run as a child process on loopback: for the demo,
/// the end-to-end tests and the benchmarks. The shared secret goes to it through the environment,
/// never its arguments.
public final class SimulatorProcess: @unchecked Sendable {
    public let process: Process
    public let port: Int
    public let sharedSecret: String
    private let directory: URL

    public var productionURL: String { "http://127.0.0.1:\(port)/verifyReceipt" }
    public var sandboxURL: String { "http://127.0.0.1:\(port)/sandbox/verifyReceipt" }

    /// Starts `binary serve` with `arguments` (seed, population, faults...) and waits until it listens, on `listenPort`
    /// (0: a free one; a simulator restarted with another clock keeps its predecessor's port).
    public init(
        binary: String,
        arguments: [String],
        sharedSecret: String,
        logFile: String? = nil,
        listenPort: Int = 0
    )
        throws
    {
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw ConfigurationError("simulator binary not found or not executable: \(binary)")
        }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("sim-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let portFile = directory.appendingPathComponent("port").path
        let p = Process()
        p.executableURL = URL(fileURLWithPath: binary)
        p.arguments = ["serve", "--port", String(listenPort), "--port-file", portFile] + arguments
        var env = ProcessInfo.processInfo.environment
        env["APPSTORE_SIM_SHARED_SECRET"] = sharedSecret
        p.environment = env
        let log = logFile ?? directory.appendingPathComponent("simulator.log").path
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let handle = FileHandle(forWritingAtPath: log)
        p.standardOutput = handle
        p.standardError = handle
        try p.run()
        process = p
        self.sharedSecret = sharedSecret
        let deadline = Date().addingTimeInterval(60)
        var found: Int?
        while Date() < deadline {
            if let text = try? String(contentsOfFile: portFile, encoding: .utf8),
                let value = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)), value > 0
            {
                found = value
                break
            }
            guard p.isRunning else { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        guard let found else {
            if p.isRunning { p.terminate() }
            let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            throw ConfigurationError("the simulator did not start: \(output.suffix(2000))")
        }
        port = found
    }

    /// Stops the simulator (SIGTERM, then SIGKILL after 5 s).
    public func stop() {
        if process.isRunning {
            process.terminate()
            let deadline = Date().addingTimeInterval(5)
            while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        try? FileManager.default.removeItem(at: directory)
    }

    deinit { stop() }

    /// Runs `binary export` into `directory` (purchases.jsonl, truth.jsonl).
    public static func export(
        binary: String,
        seed: UInt64,
        subscriptions: Int,
        now: Date,
        into directory: String,
        extra: [String] = []
    ) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: binary)
        p.arguments =
            [
                "export", "--seed", String(seed), "--subscriptions", String(subscriptions), "--now",
                RFC3339.string(now),
                "--out", directory,
            ] + extra
        let errors = Pipe()
        p.standardError = errors
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        let output = errors.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else {
            throw ConfigurationError(
                "appstore-simulator export failed (\(p.terminationStatus)): \(String(decoding: output, as: UTF8.self).suffix(2000))"
            )
        }
    }
}
