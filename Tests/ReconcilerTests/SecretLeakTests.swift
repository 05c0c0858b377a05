import CivilTime
import Foundation
import Postgres
import Reconciler
import TestSupport
import Testing

/// Secrets never leak: a real run (the built binaries, a real database, the simulator) with both log
/// formats at the most verbose level, a report folder and a metrics file: none of it contains the
/// shared secret or any receipt, and the secret is not in the process arguments.
@Suite struct SecretLeakTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static var binDirectory: URL { BuiltBinary.directory }

    @Test func noSecretOrReceiptInLogsReportsMetricsOrArguments() throws {
        let reconciler = Self.binDirectory.appendingPathComponent("renewal-reconciler").path
        let simulator = Self.binDirectory.appendingPathComponent("appstore-simulator").path
        try #require(FileManager.default.isExecutableFile(atPath: reconciler), "build first: \(reconciler)")
        let db = try TestDatabase.make()
        let secret = "s3cr3t-\(UUID().uuidString)-do-not-leak"
        let asOf = "2026-11-21T03:00:00Z"
        try withTemporaryDirectory { dir in
            let export = dir.appendingPathComponent("export")
            try SimulatorProcess.export(
                binary: simulator,
                seed: 77,
                subscriptions: 300,
                now: RFC3339.parse(asOf)!,
                into: export.path
            )
            let sim = try SimulatorProcess(
                binary: simulator,
                arguments: ["--seed", "77", "--subscriptions", "300", "--now", asOf],
                sharedSecret: secret
            )
            defer { sim.stop() }
            var env = ProcessInfo.processInfo.environment
            env["DATABASE_URL"] = db.url
            env["APPLE_SHARED_SECRET"] = secret
            env["APPLE_BUNDLE_ID"] = "com.example.renewals"
            env["APPLE_VERIFY_URL"] = sim.productionURL
            env["APPLE_SANDBOX_VERIFY_URL"] = sim.sandboxURL

            var output = ""
            func run(_ args: [String], watchArguments: Bool = false) throws -> Int32 {
                let p = Process()
                p.executableURL = URL(fileURLWithPath: reconciler)
                p.arguments = args
                p.environment = env
                let out = Pipe()
                let err = Pipe()
                p.standardOutput = out
                p.standardError = err
                try p.run()
                if watchArguments {
                    // While it runs, its command line (what `ps` shows) must not hold the secret.
                    let cmdline =
                        (try? String(contentsOfFile: "/proc/\(p.processIdentifier)/cmdline", encoding: .utf8)) ?? ""
                    #expect(!cmdline.contains(secret))
                }
                let o = out.fileHandleForReading.readDataToEndOfFile()
                let e = err.fileHandleForReading.readDataToEndOfFile()
                p.waitUntilExit()
                output += String(decoding: o, as: UTF8.self) + String(decoding: e, as: UTF8.self)
                return p.terminationStatus
            }
            #expect(try run(["migrate"]) == 0)
            #expect(try run(["import", "--file", export.appendingPathComponent("purchases.jsonl").path]) == 0)
            let reports = dir.appendingPathComponent("reports").path
            let metrics = dir.appendingPathComponent("metrics.prom").path
            let first = try run(
                [
                    "run", "--now", asOf, "--rate", "2000", "--log-level", "trace", "--log-format", "text",
                    "--report-dir", reports, "--metrics-file", metrics,
                ],
                watchArguments: true
            )
            #expect(first == 0 || first == 2)
            let second = try run(
                [
                    "backfill", "--all", "--now", asOf, "--rate", "2000", "--log-level", "trace", "--log-format",
                    "json",
                    "--report-dir", reports, "--metrics-file", metrics, "--dry-run",
                ])
            #expect(second == 0 || second == 2)
            // A wrong secret: Apple (the simulator) says 21004; the error must not echo either secret.
            env["APPLE_SHARED_SECRET"] = "wrong-\(secret)"
            let third = try run(["backfill", "--all", "--now", asOf, "--report-dir", reports, "--log-level", "trace"])
            #expect(third == 78)
            env["APPLE_SHARED_SECRET"] = secret

            // Everything the runs left behind.
            var texts = [output]
            let enumerator = FileManager.default.enumerator(atPath: reports)
            var files = 0
            while let name = enumerator?.nextObject() as? String {
                let path = reports + "/" + name
                var isDir: ObjCBool = false
                if FileManager.default.fileExists(atPath: path, isDirectory: &isDir), !isDir.boolValue {
                    texts.append(try String(contentsOfFile: path, encoding: .utf8))
                    files += 1
                }
            }
            texts.append(try String(contentsOfFile: metrics, encoding: .utf8))
            #expect(files >= 10, "two report folders with five files each")
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
            // A 40-character window from the middle of each receipt is unique to it (the start is a
            // shared header); none may appear anywhere.
            let windows = receipts.filter { $0.count >= 120 }.map { r -> String in
                let start = r.index(r.startIndex, offsetBy: r.count / 2)
                return String(r[start..<r.index(start, offsetBy: 40)])
            }
            for text in texts {
                #expect(!text.contains(secret))
                #expect(!text.contains("wrong-\(secret)"))
                for window in windows where text.contains(window) {
                    Issue.record("a receipt fragment appears in the output: \(window.prefix(12))…")
                    break
                }
            }
        }
    }
}
