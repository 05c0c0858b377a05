import AppStoreClient
import AppStoreSimulator
import CurlHTTP
import Foundation
import ReceiptDomain
import Testing

/// An in-process App Store simulator (127.0.0.1, port 0) plus a `VerifyReceiptClient` pointed at it,
/// for the client's loopback tests. Built by `withHarness`, which shuts both down afterwards.
struct SimulatorHarness: Sendable {
    /// The frozen instant the simulator answers at (its population is built around it).
    static let now: Int64 = 1_795_230_000_000  // 2026-11-21T03:00:00Z
    static let sharedSecret = SimulatorConfiguration.defaultSharedSecret

    let server: SimulatorServer
    let client: VerifyReceiptClient

    /// The stored receipt of the first family with `scenario`.
    func receipt(_ scenario: Scenario) throws -> String {
        let family = try #require(server.population.families.first { $0.scenario == scenario }, "no \(scenario) family")
        return server.service.renderer.storedReceipt(family)
    }

    /// One request, classified.
    func send(_ receipt: String, to environment: AppleEnvironment) async -> VerifyAttemptResult {
        await Self.send(client, receipt, to: environment)
    }

    static func send(
        _ client: VerifyReceiptClient,
        _ receipt: String,
        to environment: AppleEnvironment
    ) async
        -> VerifyAttemptResult
    {
        await withCheckedContinuation { continuation in
            client.send(receipt: receipt, to: environment) { continuation.resume(returning: $0) }
        }
    }

    /// Drives `plan` the way the pipeline does (send what it says, no waiting between retries).
    static func run(
        _ client: VerifyReceiptClient,
        _ receipt: String,
        plan start: VerificationAttempt
    ) async
        -> (final: VerificationAttempt.Final, attempts: [VerifyAttemptResult], plan: VerificationAttempt)
    {
        var plan = start
        var step = plan.start()
        var attempts: [VerifyAttemptResult] = []
        while true {
            let environment: AppleEnvironment
            switch step {
            case .finished(let final): return (final, attempts, plan)
            case .send(let target): environment = target
            case .retry(let target, _, _, _): environment = target
            }
            let result = await send(client, receipt, to: environment)
            attempts.append(result)
            step = plan.next(after: result.verdict, now: Date())
        }
    }

    /// The simulator's `/_stats` for one path: requests, HTTP statuses and Apple statuses (as string keys).
    func pathStats(_ path: String) throws -> (requests: Int, http: [String: Int], apple: [String: Int]) {
        let json = try JSONSerialization.jsonObject(with: Data(server.stats.json())) as? [String: Any]
        let paths = try #require(json?["paths"] as? [String: Any])
        guard let entry = paths[path] as? [String: Any] else { return (0, [:], [:]) }
        return (
            entry["requests"] as? Int ?? -1, entry["http_status"] as? [String: Int] ?? [:],
            entry["apple_status"] as? [String: Int] ?? [:]
        )
    }

    /// Total verify requests the simulator numbered (every path, faults included).
    func totalRequests() throws -> Int {
        let json = try JSONSerialization.jsonObject(with: Data(server.stats.json())) as? [String: Any]
        return try #require(json?["requests_total"] as? Int)
    }

    /// A client with its own libcurl multi handle; the caller shuts `http` down.
    static func makeClient(
        production: String,
        sandbox: String,
        password: String? = sharedSecret,
        excludeOld: Bool = false,
        requestTimeout: Duration = .seconds(20),
        maxResponseBytes: Int = 32 << 20
    ) -> (VerifyReceiptClient, CurlHTTPClient) {
        let http = CurlHTTPClient(configuration: .init(maxConnections: 8, maxHostConnections: 4))
        let endpoints = VerifyReceiptEndpoints(
            production: production,
            sandbox: sandbox,
            password: password,
            excludeOldTransactions: excludeOld,
            connectTimeout: .seconds(5),
            requestTimeout: requestTimeout,
            maxResponseBytes: maxResponseBytes
        )
        return (VerifyReceiptClient(http: http, endpoints: endpoints), http)
    }
}

/// Starts a simulator and a client on it, runs `body`, shuts both down (also when `body` throws).
func withHarness<T>(
    subscriptions: Int = 200,
    password: String? = SimulatorHarness.sharedSecret,
    excludeOld: Bool = false,
    requestTimeout: Duration = .seconds(20),
    endpoints: ((SimulatorServer) -> (production: String, sandbox: String))? = nil,
    configure: (inout SimulatorConfiguration) -> Void = { _ in },
    _ body: (SimulatorHarness) async throws -> T
) async throws -> T {
    var config = SimulatorConfiguration(seed: 21, subscriptions: subscriptions, now: SimulatorHarness.now)
    config.threads = 1
    configure(&config)
    let server = try SimulatorServer.start(configuration: config)
    let urls: (production: String, sandbox: String) = endpoints?(server) ?? (server.productionURL, server.sandboxURL)
    let (client, http) = SimulatorHarness.makeClient(
        production: urls.production,
        sandbox: urls.sandbox,
        password: password,
        excludeOld: excludeOld,
        requestTimeout: requestTimeout
    )
    defer {
        http.shutdown()
        try? server.shutdown()
    }
    return try await body(SimulatorHarness(server: server, client: client))
}
