import Foundation
import Synchronization

#if canImport(System)
import System
#else
import SystemPackage
#endif

#if canImport(Glibc)
import Glibc
#endif

/// A real HTTPS server on 127.0.0.1 for the TLS tests: `Tests/TLS/https_server.py` run with Python's `ssl`
/// module (python3 from Debian, installed by `scripts/lib/deps.sh`), serving the certificate and key it is
/// given (docs/testing.md, "TLS"). It answers every HTTP request with 200 and `hello over TLSv1.x`, or, with
/// `relay`, forwards the decrypted bytes to a plain TCP server (an HTTPS front for the simulator).
/// `maxTLS: "1.1"` offers only TLS 1.0 and 1.1. The process ends at `stop()`, or by itself when the test
/// process goes away (it exits when its standard input closes).
public final class TLSTestServer: Sendable {
    /// The script, beside the test sources.
    public static let script = BuiltBinary.packageRoot.appendingPathComponent("Tests/TLS/https_server.py").path

    public let port: Int
    private let process: ChildProcess
    /// The write end of the server's standard input, held until `stop()` closes it.
    private let input: Mutex<FileDescriptor?>
    /// The server's standard error (handshake refusals, one line each).
    public var logFile: String { process.errorFile.path }

    private init(port: Int, process: ChildProcess, input: FileDescriptor) {
        self.port = port
        self.process = process
        self.input = Mutex(input)
    }

    /// Starts the server (a `ChildProcess`) and awaits its first line, "listening PORT", which it prints once its
    /// socket is bound.
    public static func start(
        certificate: String,
        key: String,
        maxTLS: String? = nil,
        relay: String? = nil
    ) async throws -> TLSTestServer {
        var arguments = ["python3", "-W", "ignore::DeprecationWarning", Self.script, "serve", "--cert", certificate]
        arguments += ["--key", key]
        if let maxTLS { arguments += ["--max-tls", maxTLS] }
        if let relay { arguments += ["--relay", relay] }
        // The child reads its end; this process keeps the other until `stop()` (or its own exit) closes it. Both
        // close-on-exec, though every spawn here closes what it does not hand the child anyway.
        let (output, input) = try FileDescriptor.pipe()
        for end in [output, input] { _ = fcntl(end.rawValue, F_SETFD, FD_CLOEXEC) }
        let process: ChildProcess
        do {
            process = try await ChildProcess("/usr/bin/env", arguments, standardInput: output)
        } catch {
            try? input.close()
            throw error
        }
        guard let line = try? await firstLine(of: process), line.hasPrefix("listening "),
            let port = Int(line.dropFirst("listening ".count))
        else {
            let text = (try? String(contentsOf: process.outputFile, encoding: .utf8)) ?? ""
            let stderr = (try? String(contentsOf: process.errorFile, encoding: .utf8)) ?? ""
            end(process, input: input)
            throw TLSTestServerError("https_server.py did not start: \(text) \(stderr)")
        }
        return TLSTestServer(port: port, process: process, input: input)
    }

    /// The first line the server printed, once it has printed one (nil: it ended first, or printed none in 60 s).
    private static func firstLine(of process: ChildProcess) async throws -> Substring? {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let exited = process.hasExited
            let text = (try? String(contentsOf: process.outputFile, encoding: .utf8)) ?? ""
            if let newline = text.firstIndex(of: "\n") { return text[..<newline] }
            if exited { return nil }
            try await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }

    /// Closes the server's standard input, kills it with SIGKILL (which swift-subprocess sees through the server's
    /// pidfd, and reaps) and removes its output files.
    private static func end(_ process: ChildProcess, input: FileDescriptor?) {
        try? input?.close()
        process.signal(SIGKILL)
        try? FileManager.default.removeItem(at: process.outputFile)
        try? FileManager.default.removeItem(at: process.errorFile)
    }

    deinit { stop() }

    /// Stops the server (idempotent; see `end`).
    public func stop() {
        Self.end(process, input: input.withLock { $0.take() })
    }

    /// What the server logged so far (handshake refusals).
    public var log: String { (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "" }

    /// Connects at exactly TLS `version` ("1.1") without verifying the certificate and returns the version
    /// negotiated ("TLSv1.1"), or the error: proof of what the server really offers.
    public func probe(tls version: String) async -> String {
        let arguments = [
            "python3", "-W", "ignore::DeprecationWarning", Self.script, "probe", "--port", String(port), "--tls",
            version,
        ]
        do {
            let probe = try await ChildProcess.run("/usr/bin/env", arguments)
            return (probe.stdout + probe.stderr).trimmingCharacters(in: .whitespacesAndNewlines)
        } catch {
            return "\(error)"
        }
    }
}
