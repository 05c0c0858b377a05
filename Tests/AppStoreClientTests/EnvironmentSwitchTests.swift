import AppStoreClient
import AppStoreSimulator
import Foundation
import ReceiptDomain
import TestSupport
import Testing

/// The 21007/21008 hops over real HTTP: one switch each way, never a third request.
@Suite struct EnvironmentSwitchTests {
    @Test func sandboxReceiptGoesToProductionThenSandboxOnce() async throws {
        try await withHarness { h in
            let outcome = await h.client.verify(receipt: try h.receipt(.sandbox))
            guard case .ok(let response, let environment) = outcome.final else {
                Issue.record("expected ok, got \(outcome.final)")
                return
            }
            #expect(environment == .sandbox)
            #expect(response.status == 0)
            #expect(response.environment == .sandbox)
            #expect(outcome.attempts.map(\.environment) == [.production, .sandbox])
            #expect(outcome.attempts.map(\.appleStatus) == [21007, 0])
            #expect(outcome.attempts.first?.verdict == .switchEnvironment(to: .sandbox))

            let production = try h.pathStats("/verifyReceipt")
            let sandbox = try h.pathStats("/sandbox/verifyReceipt")
            #expect(production.requests == 1)
            #expect(production.apple == ["21007": 1])
            #expect(sandbox.requests == 1)
            #expect(sandbox.apple == ["0": 1])
            #expect(try h.totalRequests() == 2)
        }
    }

    @Test func productionReceiptStartedInSandboxHopsToProductionOnce() async throws {
        try await withHarness { h in
            let receipt = try h.receipt(.silentRenewal)
            let run = await SimulatorHarness.run(
                h.client,
                receipt,
                plan: VerificationAttempt(maxAttempts: 3, startingEnvironment: .sandbox)
            )
            guard case .ok(let response, let environment) = run.final else {
                Issue.record("expected ok, got \(run.final)")
                return
            }
            #expect(environment == .production)
            #expect(response.environment == .production)
            #expect(run.attempts.map(\.environment) == [.sandbox, .production])
            #expect(run.attempts.map(\.appleStatus) == [21008, 0])
            #expect(run.plan.requests == 2)
            #expect(run.plan.switched)
            #expect(try h.pathStats("/sandbox/verifyReceipt").apple == ["21008": 1])
            #expect(try h.pathStats("/verifyReceipt").apple == ["0": 1])
        }
    }

    @Test func productionReceiptVerifiesWithOneRequest() async throws {
        try await withHarness { h in
            let outcome = await h.client.verify(receipt: try h.receipt(.activeNotRenewed))
            guard case .ok(_, let environment) = outcome.final else {
                Issue.record("expected ok, got \(outcome.final)")
                return
            }
            #expect(environment == .production)
            #expect(outcome.attempts.count == 1)
            #expect(try h.totalRequests() == 1)
        }
    }

    /// A server that answers 21007 on production and 21008 on sandbox: the plan stops after one hop.
    @Test(arguments: [AppleEnvironment.production, .sandbox])
    func pingPongServerEndsInEnvironmentLoopAfterTwoRequests(start: AppleEnvironment) async throws {
        let server = try LoopbackHTTPServer { request in
            request.path == "/sandbox/verifyReceipt"
                ? .json(#"{"status":21008,"environment":"Sandbox"}"#)
                : .json(#"{"status":21007,"environment":"Production"}"#)
        }
        defer { server.stop() }
        let (client, http) = SimulatorHarness.makeClient(
            production: server.baseURL + "/verifyReceipt",
            sandbox: server.baseURL + "/sandbox/verifyReceipt"
        )
        defer { http.shutdown() }

        let run = await SimulatorHarness.run(
            client,
            "bouncing-receipt",
            plan: VerificationAttempt(maxAttempts: 5, startingEnvironment: start)
        )
        guard case .rejected(let reason) = run.final else {
            Issue.record("expected rejected(environment_loop), got \(run.final)")
            return
        }
        #expect(reason.code == .environmentLoop)
        #expect(run.attempts.count == 2)
        #expect(run.attempts.map(\.environment) == [start, start.other])
        #expect(server.requests.count == 2)
        let expectedPaths =
            start == .production
            ? ["/verifyReceipt", "/sandbox/verifyReceipt"] : ["/sandbox/verifyReceipt", "/verifyReceipt"]
        #expect(server.requests.map(\.path) == expectedPaths)

        if start == .production {
            // The stand-alone `verify` takes the same path.
            let outcome = await client.verify(receipt: "bouncing-receipt", maxAttempts: 5)
            #expect(outcome.final == .rejected(reason))
            #expect(outcome.attempts.count == 2)
            #expect(server.requests.count == 4)
        }
    }

    /// Both endpoint URLs on the simulator's production path: a sandbox receipt gets 21007 twice; the
    /// second one (from the "sandbox" endpoint) is a loop, not a third request.
    @Test func sandboxReceiptBouncingOffProductionTwiceIsALoop() async throws {
        try await withHarness(endpoints: { ($0.productionURL, $0.productionURL) }) { h in
            let outcome = await h.client.verify(receipt: try h.receipt(.sandbox), maxAttempts: 5)
            guard case .rejected(let reason) = outcome.final else {
                Issue.record("expected rejected(environment_loop), got \(outcome.final)")
                return
            }
            #expect(reason.code == .environmentLoop)
            #expect(reason.appleStatus == 21007)
            #expect(outcome.attempts.count == 2)
            let production = try h.pathStats("/verifyReceipt")
            #expect(production.requests == 2)
            #expect(production.apple == ["21007": 2])
            #expect(try h.totalRequests() == 2)
        }
    }
}
