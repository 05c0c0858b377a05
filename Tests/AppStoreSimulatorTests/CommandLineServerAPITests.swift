import Foundation
import TestSupport
import Testing
import X509

@testable import AppStoreSimulator

/// `appstore-simulator export` writes the Server API files the same way twice; `token` prints a JWT the
/// simulator accepts.
@Suite struct CommandLineServerAPITests {
    private func run(_ args: [String]) async throws -> (status: Int32, stdout: String) {
        let outcome = try await ChildProcess.run(CommandLineTests.binary, args)
        return (outcome.status, outcome.stdout)
    }

    @Test func exportWritesTheSameServerAPIFilesAndTokenIsAccepted() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: CommandLineTests.binary), "build the product first")
        let a = temporaryDirectory("cli-api-a")
        let b = temporaryDirectory("cli-api-b")
        defer { for d in [a, b] { try? FileManager.default.removeItem(atPath: d) } }
        for dir in [a, b] {
            let r = try await run([
                "export", "--seed", "9", "--subscriptions", "120", "--now", "2026-11-21T03:00:00Z",
                "--out", dir,
            ])
            #expect(r.status == 0)
        }
        for f in ["api.json", "key.p8", "ledger.jsonl", "revenue.json"] {
            let x = FileManager.default.contents(atPath: a + "/server-api/" + f)
            #expect(x != nil && x == FileManager.default.contents(atPath: b + "/server-api/" + f), "\(f)")
        }
        let roots = try [a, b].map {
            try Certificate(pemEncoded: String(contentsOfFile: $0 + "/server-api/root.pem", encoding: .utf8))
        }
        #expect(roots[0].subject == roots[1].subject && roots[0].publicKey == roots[1].publicKey)
        #expect(roots[0].notValidBefore == roots[1].notValidBefore && roots[0].notValidAfter == roots[1].notValidAfter)

        let token = try await run(["token", "--seed", "9", "--lifetime", "600"])
        #expect(token.status == 0)
        let jwt = token.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let identity = ServerAPIIdentity(seed: 9, anchor: PopulationTests.now, bundleId: "com.example.renewals")
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        #expect(APITokenAuthenticator(identity: identity).failure(token: Array(jwt.utf8), now: now) == nil)
        let other = ServerAPIIdentity(seed: 10, anchor: PopulationTests.now, bundleId: "com.example.renewals")
        #expect(APITokenAuthenticator(identity: other).failure(token: Array(jwt.utf8), now: now) == .keyId)
    }
}
