import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A real HTTPS server on 127.0.0.1 for the TLS tests: `Tests/TLS/https_server.py` run with Python's `ssl`
/// module (python3 from Debian, installed by `scripts/lib/deps.sh`), serving the certificate and key it is
/// given (docs/testing.md, "TLS"). It answers every HTTP request with 200 and `hello over TLSv1.x`, or, with
/// `relay`, forwards the decrypted bytes to a plain TCP server (an HTTPS front for the simulator).
/// `maxTLS: "1.1"` offers only TLS 1.0 and 1.1. The process ends at `stop()`, or by itself when the test
/// process goes away (it exits when its standard input closes).
public final class TLSTestServer: @unchecked Sendable {
    /// The script, beside the test sources.
    public static let script = BuiltBinary.packageRoot.appendingPathComponent("Tests/TLS/https_server.py").path

    public let port: Int
    private let process: Process
    private let input: Pipe
    /// The server's standard error (handshake refusals, one line each).
    public let logFile: String

    public init(certificate: String, key: String, maxTLS: String? = nil, relay: String? = nil) throws {
        var arguments = [Self.script, "serve", "--cert", certificate, "--key", key]
        if let maxTLS { arguments += ["--max-tls", maxTLS] }
        if let relay { arguments += ["--relay", relay] }
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-W", "ignore::DeprecationWarning"] + arguments
        input = Pipe()
        let output = Pipe()
        logFile = NSTemporaryDirectory() + "https-server-\(UUID().uuidString).log"
        FileManager.default.createFile(atPath: logFile, contents: nil)
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle(forWritingAtPath: logFile)
        try process.run()
        // The first line is "listening PORT" once the socket is bound.
        var line = Data()
        while true {
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty || byte == Data("\n".utf8) { break }
            line.append(byte)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard text.hasPrefix("listening "), let port = Int(text.dropFirst("listening ".count)) else {
            process.terminate()
            let stderr = (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? ""
            throw TLSTestServerError("https_server.py did not start: \(text) \(stderr)")
        }
        self.port = port
    }

    /// Starts the server (`init`) on a thread of its own, awaited: the init reads the server's first line.
    public static func start(
        certificate: String,
        key: String,
        maxTLS: String? = nil,
        relay: String? = nil
    ) async throws -> TLSTestServer {
        try await OffPool.run { try TLSTestServer(certificate: certificate, key: key, maxTLS: maxTLS, relay: relay) }
    }

    deinit { stop() }

    /// Stops the server (idempotent).
    public func stop() {
        try? input.fileHandleForWriting.close()
        if process.isRunning {
            // SIGKILL: a child spawned from a Dispatch thread may inherit a mask that blocks SIGTERM.
            let pid = process.processIdentifier
            kill(pid, SIGKILL)
            // Reaped here rather than with `waitUntilExit`: with many children started at once from other threads,
            // Foundation's exit notice can be missed and `waitUntilExit` then spins forever on a zombie. After
            // SIGKILL the child exits; `waitpid` returns at once (ECHILD when Foundation reaped it first).
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1, errno == EINTR {}
        }
        try? FileManager.default.removeItem(atPath: logFile)
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
