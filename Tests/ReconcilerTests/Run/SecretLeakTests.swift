import CivilTime
import Foundation
import Postgres
import Reconciler
import ReconcilerDemo
import TestSupport
import Testing

#if canImport(System)
import System
#else
import SystemPackage
#endif

/// Secrets never leak: real runs (the built binaries, a real database, the simulator) with both log
/// formats at the most verbose level, report folders and a metrics file: none of it contains the shared
/// secret, a receipt, the In-App Purchase key, an API token (JWT) or a signed payload (JWS), and no
/// secret is in the process arguments.
@Suite struct SecretLeakTests {
    static let packageRoot = EndToEndFixture.packageRoot
    static var binDirectory: URL { BuiltBinary.directory }
    static var reconciler: String { binDirectory.appendingPathComponent("renewal-reconciler").path }

    @Test func noSecretOrReceiptInLogsReportsMetricsOrArguments() async throws {
        let reconciler = Self.reconciler
        let simulator = Self.binDirectory.appendingPathComponent("appstore-simulator").path
        try #require(FileManager.default.isExecutableFile(atPath: reconciler), "build first: \(reconciler)")
        let db = try TestDatabase.make()
        let secret = "s3cr3t-\(UUID().uuidString)-do-not-leak"
        let asOf = "2026-11-21T03:00:00Z"
        try await withTemporaryDirectoryAsync { dir in
            let export = dir.appendingPathComponent("export")
            try await SimulatorProcess.exported(
                binary: simulator,
                seed: 77,
                subscriptions: 300,
                now: RFC3339.parse(asOf)!,
                into: export.path
            )
            let sim = try await SimulatorProcess.started(
                binary: simulator,
                arguments: ["--seed", "77", "--subscriptions", "300", "--now", asOf],
                sharedSecret: secret
            )
            defer { sim.signal(SIGKILL) }
            var env = ProcessInfo.processInfo.environment
            env["DATABASE_URL"] = db.url
            env["APPLE_SHARED_SECRET"] = secret
            env["APPLE_BUNDLE_ID"] = "com.example.renewals"
            env["APPLE_VERIFY_URL"] = sim.productionURL
            env["APPLE_SANDBOX_VERIFY_URL"] = sim.sandboxURL

            var output = ""
            func run(_ args: [String], watchArguments: Bool = false) async throws -> Int32 {
                let child = try await Self.runToEnd(args, environment: env)
                output += child.output
                // While it ran, its command line (what `ps` shows) must not have held the secret.
                if watchArguments { #expect(!child.commandLine.contains(secret)) }
                return child.status
            }
            #expect(try await run(["migrate"]) == 0)
            #expect(try await run(["import", "--file", export.appendingPathComponent("purchases.jsonl").path]) == 0)
            let reports = dir.appendingPathComponent("reports").path
            let metrics = dir.appendingPathComponent("metrics.prom").path
            let first = try await run(
                [
                    "run", "--now", asOf, "--rate", "2000", "--log-level", "trace", "--log-format", "text",
                    "--report-dir", reports, "--metrics-file", metrics,
                ],
                watchArguments: true
            )
            #expect(first == 0 || first == 2)
            let second = try await run(
                [
                    "backfill", "--all", "--now", asOf, "--rate", "2000", "--log-level", "trace", "--log-format",
                    "json",
                    "--report-dir", reports, "--metrics-file", metrics, "--dry-run",
                ])
            #expect(second == 0 || second == 2)
            // A wrong secret: Apple (the simulator) says 21004; the error must not echo either secret.
            env["APPLE_SHARED_SECRET"] = "wrong-\(secret)"
            let third = try await run([
                "backfill", "--all", "--now", asOf, "--report-dir", reports, "--log-level", "trace",
            ])
            #expect(third == 78)
            env["APPLE_SHARED_SECRET"] = secret

            // Everything the runs left behind.
            let files = try Self.fileTexts(under: reports)
            #expect(files.count >= 10, "two report folders with five files each")
            let texts = [output, try String(contentsOfFile: metrics, encoding: .utf8)] + files
            #expect(output.contains("completed"), "the logs are really there")

            // Receipts: what was imported and what Apple returned (now stored).
            let conn = try db.connect()
            defer { conn.close() }
            var receipts = try conn.query("SELECT latest_receipt FROM subscriptions").map {
                try $0.decode("latest_receipt", as: String.self)
            }
            for line in try String(
                contentsOfFile: export.appendingPathComponent("purchases.jsonl").path,
                encoding: .utf8
            )
            .split(separator: "\n") {
                if let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                    let receipt = object["latest_receipt"] as? String
                {
                    receipts.append(receipt)
                }
            }
            #expect(receipts.count >= 600)
            let fragments = Fragments(receipts)
            for text in texts {
                #expect(!text.contains(secret))
                #expect(!text.contains("wrong-\(secret)"))
                if let window = fragments.firstMatch(in: text) {
                    Issue.record("a receipt fragment appears in the output: \(window.prefix(12))…")
                }
            }
        }
    }

    /// The same through the App Store Server API (a faulty simulator, forged answers refused, notification
    /// history, `notifications import` of good and bad lines, a wrong key id answered 401): the key's PEM
    /// and every base64 line of it, any JWT or JWS (`eyJ…`, whether the token the reconciler signs or a
    /// payload Apple signed), a fragment of any stored signed payload, and the shared secret appear in no
    /// output of either log format at trace level, no report file, the metrics file, and no command line.
    @Test func noKeyTokenOrSignedPayloadInLogsReportsMetricsOrArguments() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.reconciler), "build first: \(Self.reconciler)")
        let world = try await EndToEndFixture(subscriptions: 300, seed: 78, seedPriorRuns: true)
        try await world.startSimulator(
            ServerAPIRunTests.simulatorLimits + [
                // Answers refused or retried are where a careless message would quote a body or a payload.
                "--fault-http500", "0.02", "--fault-malformed-json", "0.02", "--fault-truncated", "0.02",
                "--fault-211xx", "0.02", "--fault-tampered-payload", "0.01", "--signature-faulty-subscriptions",
                "0.05",
            ]
        )
        var env = world.environment
        for (k, v) in try world.serverAPIEnvironment() { env[k] = v }
        let key = try String(contentsOfFile: try #require(env["APPLE_PRIVATE_KEY_FILE"]), encoding: .utf8)
        let keyLines = key.split(whereSeparator: \.isNewline).map(String.init).filter { !$0.hasPrefix("-----") }
        try #require(keyLines.count >= 3, "a PEM body")
        let reports = world.reportDirectory
        let metrics = world.directory.appendingPathComponent("metrics.prom").path
        let fast = ServerAPIRunTests.fast + ["--max-attempts", "8", "--log-level", "trace"]

        var runs: [(name: String, child: ChildRun)] = []
        func run(_ name: String, _ arguments: [String], input: Data? = nil) async throws -> Int32 {
            let child = try await Self.runToEnd(arguments, environment: env, input: input)
            runs.append((name, child))
            return child.status
        }
        let first = try await run(
            "run (text)",
            ["run", "--now", world.now, "--log-format", "text", "--report-dir", reports, "--metrics-file", metrics]
                + fast
        )
        #expect(first == 0 || first == 2, "\(runs.last!.child.output.suffix(2000))")
        let second = try await run(
            "backfill --dry-run (json)",
            [
                "backfill", "--all", "--now", world.now, "--dry-run", "--log-format", "json", "--report-dir", reports,
                "--metrics-file", metrics,
            ] + fast
        )
        #expect(second == 0 || second == 2, "\(runs.last!.child.output.suffix(2000))")

        let conn = try world.connect()
        defer { conn.close() }
        func column(_ sql: String) throws -> [String] {
            try conn.query(sql).compactMap { try $0.decode("jws", as: String?.self) }
        }
        let payloads = try column(
            "SELECT signed_payload AS jws FROM app_store_notifications ORDER BY notification_uuid"
        )
        // Webhook lines to import: a stored payload, one with its signature broken, and text that is no JWS.
        let firstPayload = try #require(payloads.first)
        var tampered = Array(firstPayload)
        tampered[tampered.count - 5] = tampered[tampered.count - 5] == "A" ? "B" : "A"
        let webhook = world.directory.appendingPathComponent("webhook.jsonl")
        try Data(
            [firstPayload, String(tampered), "{\"signedPayload\": \"\(String(tampered))\"}", "not a payload"]
                .joined(separator: "\n").utf8
        ).write(to: webhook)
        for format in ["text", "json"] {
            // From standard input, written once the command line was read: the import alone ends within
            // milliseconds.
            let imported = try await run(
                "notifications import (\(format))",
                ["notifications", "import", "--file", "-", "--log-level", "trace", "--log-format", format],
                input: try Data(contentsOf: webhook)
            )
            #expect(imported == 64, "\(runs.last!.child.output.suffix(2000))")
        }
        // A wrong key id: the simulator answers 401; the error names the settings, never the token or the key.
        env["APPLE_KEY_ID"] = "WRONGKEY01"
        let third = try await run(
            "run with a wrong key id (json)",
            ["run", "--now", world.now, "--log-format", "json", "--report-dir", reports, "--metrics-file", metrics]
                + fast
        )
        #expect(third == 78, "\(runs.last!.child.output.suffix(2000))")

        // The signed data the runs handled, now stored: each must be absent from the outputs, in part too.
        let signed =
            try payloads
            + column("SELECT signed_transaction_info AS jws FROM subscriptions")
            + column("SELECT signed_renewal_info AS jws FROM subscriptions")
            + column("SELECT signed_transaction AS jws FROM subscription_transactions")
        #expect(signed.count > 1000, "\(signed.count) signed payloads stored")
        // Each one's payload and signature (its header, the certificate chain, is public and the same in all).
        let fragments = Fragments(
            signed.flatMap { $0.split(separator: ".").dropFirst().map(String.init) },
            minimumLength: 80
        )

        let files = try Self.fileTexts(under: reports)
        #expect(files.count >= 10, "two report folders with five files each, \(files.count) files")
        let outputs = runs.map { ("output of \($0.name)", $0.child.output) }
        let texts =
            outputs + [("metrics file", try String(contentsOfFile: metrics, encoding: .utf8))]
            + files.enumerated().map { ("report file \($0.offset)", $0.element) }
            + runs.map { ("command line of \($0.name)", $0.child.commandLine) }
        #expect(runs[0].child.output.contains("completed"), "the logs are really there")
        #expect(runs[1].child.output.contains("\"level\""), "json logs")
        #expect(
            runs.allSatisfy { !$0.child.commandLine.isEmpty },
            "every command line was read: \(runs.map { "\($0.name): \($0.child.commandLine.prefix(200))" })"
        )

        var forbidden = [("the shared secret", world.secret), ("the key", key), ("a PEM marker", "PRIVATE KEY")]
        forbidden += keyLines.map { ("a line of the key", $0) }
        forbidden.append(("the key's body", keyLines.joined()))
        for (name, text) in texts {
            for (what, value) in forbidden where text.contains(value) {
                Issue.record("\(what) appears in the \(name)")
            }
            if let token = Self.firstJWSLike(in: text) {
                Issue.record("a JWT or JWS appears in the \(name): \(token.prefix(16))…")
            }
            if let window = fragments.firstMatch(in: text) {
                Issue.record("a signed payload's fragment appears in the \(name): \(window.prefix(12))…")
            }
        }
    }

    // MARK: - Shared helpers

    /// A reconciler run to its end: how it exited, its standard output and error together, and its command
    /// line as `/proc/PID/cmdline` showed it (what `ps` shows) while it ran.
    struct ChildRun {
        var status: Int32
        var output: String
        var commandLine: String
    }

    /// `input`, when given, is the child's standard input, written only once its command line was read: a command
    /// that reads it cannot end before.
    static func runToEnd(
        _ arguments: [String],
        environment: [String: String],
        input: Data? = nil
    ) async throws
        -> ChildRun
    {
        var standardInput: (readEnd: FileDescriptor, writeEnd: FileDescriptor)?
        if input != nil {
            standardInput = try FileDescriptor.pipe()
            for end in [standardInput!.readEnd, standardInput!.writeEnd] {
                _ = fcntl(end.rawValue, F_SETFD, FD_CLOEXEC)
            }
        }
        // Watched from before the spawn, on a thread of its own (a quick child is gone before a task could look).
        let watch = ChildCommandLineWatch(prefix: [reconciler] + arguments)
        defer { watch.stop() }
        let child: ChildProcess
        do {
            child = try await ChildProcess(
                reconciler,
                arguments,
                environment: environment,
                standardInput: standardInput?.readEnd
            )
        } catch {
            try? standardInput?.writeEnd.close()
            throw error
        }
        // Standard input is written only once the command line was read: the import alone ends within milliseconds.
        let deadline = Date().addingTimeInterval(10)
        while watch.commandLine == nil && !child.hasExited && Date() < deadline {
            try await Task.sleep(for: .milliseconds(1))
        }
        if let input, let end = standardInput?.writeEnd {
            // A few kilobytes: within the pipe's buffer, so the write does not wait for the child.
            _ = try? input.withUnsafeBytes { try end.writeAll($0) }
            try? end.close()
        }
        let outcome = await child.outcome()
        return ChildRun(
            status: outcome.status,
            output: outcome.stdout + outcome.stderr,
            commandLine: watch.commandLine ?? ""
        )
    }

    /// The contents of every regular file under `directory` (report folders).
    static func fileTexts(under directory: String) throws -> [String] {
        var texts: [String] = []
        let enumerator = FileManager.default.enumerator(atPath: directory)
        while let name = enumerator?.nextObject() as? String {
            let path = directory + "/" + name
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDir), !isDir.boolValue {
                texts.append(try String(contentsOfFile: path, encoding: .utf8))
            }
        }
        return texts
    }

    /// The first `eyJ…` run of base64url characters (`{"` encoded: how every JWT and JWS begins) in `text`.
    static func firstJWSLike(in text: String) -> String? {
        for range in text.ranges(of: "eyJ") {
            let run = text[range.lowerBound...].prefix {
                $0.isASCII && ($0.isLetter || $0.isNumber || "-_".contains($0))
            }
            if run.count >= 16 { return String(run) }
        }
        return nil
    }

    /// A 40-character window from the middle of each long secret string (receipts, the parts of signed
    /// payloads) at least `minimumLength` long: a receipt's start is a header they share, its middle is
    /// unique to it. `firstMatch(in:)` finds any of them in a
    /// text without comparing every window with every text: only runs of base64 characters long enough to
    /// hold one are looked at.
    struct Fragments {
        static let length = 40
        let windows: Set<String>

        init(_ strings: [String], minimumLength: Int = 3 * Fragments.length) {
            windows = Set(
                strings.filter { $0.utf8.count >= minimumLength }.map { s in
                    let bytes = Array(s.utf8)
                    let start = bytes.count / 2
                    return String(decoding: bytes[start..<start + Self.length], as: UTF8.self)
                }
            )
        }

        func firstMatch(in text: String) -> String? {
            let bytes = Array(text.utf8)
            var runStart = 0
            for i in 0...bytes.count {
                if i < bytes.count && Self.isBase64(bytes[i]) { continue }
                if i - runStart >= Self.length {
                    for start in runStart...(i - Self.length) {
                        let window = String(decoding: bytes[start..<start + Self.length], as: UTF8.self)
                        if windows.contains(window) { return window }
                    }
                }
                runStart = i + 1
            }
            return nil
        }

        /// Base64 and base64url characters, and the dot between a JWS's parts.
        static func isBase64(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: "="),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
                return true
            default:
                return false
            }
        }
    }
}
