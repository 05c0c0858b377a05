import Foundation

@testable import AppStoreSimulator

/// Starts an in-process simulator on 127.0.0.1 port 0, runs the body, shuts it down.
func withSimulator<T>(
    seed: UInt64 = 21,
    subscriptions: Int = 300,
    now: Int64? = PopulationTests.now,
    configure: (inout SimulatorConfiguration) -> Void = { _ in },
    _ body: (SimulatorServer) async throws -> T
) async throws -> T {
    var config = SimulatorConfiguration(seed: seed, subscriptions: subscriptions, now: now)
    config.threads = 2
    configure(&config)
    let server = try SimulatorServer.start(configuration: config)
    do {
        let result = try await body(server)
        try server.shutdown()
        return result
    } catch {
        try? server.shutdown()
        throw error
    }
}

extension SimulatorServer {
    /// The stored receipt of the first family with this scenario.
    func storedReceipt(_ scenario: Scenario) -> (ReceiptFamily, String)? {
        guard let f = population.families.first(where: { $0.scenario == scenario }) else { return nil }
        return (f, service.renderer.storedReceipt(f))
    }

    func path(for family: ReceiptFamily) -> String { family.sandbox ? "/sandbox/verifyReceipt" : "/verifyReceipt" }
}
