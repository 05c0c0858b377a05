import Foundation
import TestSupport
import Testing

@testable import AppStoreSimulator

/// Runs the built `appstore-simulator` binary the way a user does.
@Suite struct CommandLineTests {
    static var binary: String { BuiltBinary.simulator }

    private func run(
        _ args: [String],
        environment: [String: String] = [:]
    ) async throws -> (status: Int32, stderr: String) {
        let outcome = try await ChildProcess.run(
            Self.binary,
            args,
            environment: ProcessInfo.processInfo.environment.merging(environment) { $1 }
        )
        return (outcome.status, outcome.stderr)
    }

    @Test func exportTwiceGivesTheSameBytesAndASummary() async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.binary),
            "build the product first: \(Self.binary)"
        )
        let a = temporaryDirectory("cli-a")
        let b = temporaryDirectory("cli-b")
        defer { for d in [a, b] { try? FileManager.default.removeItem(atPath: d) } }
        for dir in [a, b] {
            let r = try await run([
                "export", "--seed", "9", "--subscriptions", "120", "--now", "2026-11-21T03:00:00Z", "--out", dir,
            ])
            #expect(r.status == 0)
            #expect(r.stderr.contains("subscriptions=120") && r.stderr.contains("silent_renewal="))
        }
        for f in ["purchases.jsonl", "truth.jsonl"] {
            #expect(
                FileManager.default.contents(atPath: a + "/" + f) == FileManager.default.contents(atPath: b + "/" + f)
            )
        }
        let bad = try await run(["export", "--now", "tomorrow", "--out", a])
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("RFC 3339"))
    }

    @Test func fault21004AllIsDocumentedAndAnswers21004EvenWithTheRightSecret() async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.binary),
            "build the product first: \(Self.binary)"
        )
        let text = try await ChildProcess.run(Self.binary, ["serve", "--help"]).stdout
        #expect(text.contains("--fault-21004-all") && text.contains("21004"))

        let dir = temporaryDirectory("cli-21004")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let portFile = dir + "/port"
        let server = try await ChildProcess(
            Self.binary,
            [
                "serve", "--seed", "9", "--subscriptions", "60", "--now", "2026-11-21T03:00:00Z",
                "--port", "0", "--port-file", portFile, "--fault-21004-all",
            ],
            environment: ProcessInfo.processInfo.environment.merging(["APPSTORE_SIM_SHARED_SECRET": "env-secret"]) {
                $1
            }
        )
        defer { server.signal(SIGKILL) }
        var port = 0
        for _ in 0..<200 where port == 0 {
            if let text = try? String(contentsOfFile: portFile, encoding: .utf8),
                let n = Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
            {
                port = n
            } else {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        try #require(port > 0, "no port file within 10 s")
        let pop = Population(seed: 9, subscriptions: 60, anchor: SimTime.parseRFC3339("2026-11-21T03:00:00Z")!)
        let renderer = ResponseRenderer(population: pop)
        for family in pop.families.prefix(10) {
            let response = try await TestConnection.once(
                port: port,
                .POST,
                family.sandbox ? "/sandbox/verifyReceipt" : "/verifyReceipt",
                body: verifyBody(receipt: renderer.storedReceipt(family), password: "env-secret")
            )
            #expect(response.json?["status"] as? Int == 21004, "\(family.scenario)")
        }
        server.signal(SIGTERM)
        _ = await server.outcome(limit: .seconds(60))
    }

    @Test func servePrintsItsPortWritesThePortFileAndUsesTheSecretFromTheEnvironment() async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.binary),
            "build the product first: \(Self.binary)"
        )
        let dir = temporaryDirectory("cli-serve")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let portFile = dir + "/port"
        let server = try await ChildProcess(
            Self.binary,
            ["serve", "--seed", "9", "--subscriptions", "60", "--now", "2026-11-21T03:00:00Z", "--port", "0"]
                + ["--port-file", portFile],
            environment: ProcessInfo.processInfo.environment.merging(["APPSTORE_SIM_SHARED_SECRET": "env-secret"]) {
                $1
            },
            directory: URL(fileURLWithPath: dir)
        )
        defer { server.signal(SIGKILL) }
        var port = 0
        for _ in 0..<200 {
            if port > 0 { break }
            if let text = try? String(contentsOfFile: portFile, encoding: .utf8),
                let n = Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
            {
                port = n
            } else {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        try #require(port > 0, "no port file within 10 s")
        let firstLine = (try? String(contentsOf: server.outputFile, encoding: .utf8)) ?? ""
        #expect(firstLine.hasPrefix("listening on http://127.0.0.1:\(port)"))
        let health = try await TestConnection.once(port: port, .GET, "/_health")
        #expect(health.status == 200)
        // A receipt nobody stored: still authenticates, so the password decides.
        let pop = Population(seed: 9, subscriptions: 60, anchor: SimTime.parseRFC3339("2026-11-21T03:00:00Z")!)
        let family = try #require(pop.families.first { $0.scenario == .silentRenewal })
        let receipt = ResponseRenderer(population: pop).storedReceipt(family)
        let ok = try await TestConnection.once(
            port: port,
            .POST,
            "/verifyReceipt",
            body: verifyBody(receipt: receipt, password: "env-secret")
        )
        #expect(ok.json?["status"] as? Int == 0)
        let wrong = try await TestConnection.once(
            port: port,
            .POST,
            "/verifyReceipt",
            body: verifyBody(receipt: receipt)
        )
        #expect(wrong.json?["status"] as? Int == 21004)
        server.signal(SIGTERM)
        let ended = await server.outcome(limit: .seconds(5))
        #expect(ended.reason == .uncaughtSignal && ended.status == SIGTERM, "SIGTERM did not stop the server: \(ended)")
    }
}
