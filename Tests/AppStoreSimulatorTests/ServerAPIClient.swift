import Foundation

@testable import AppStoreSimulator

/// The test target's App Store Server API client: reads the exported `server-api/` files, signs its JWT
/// with the exported key, calls the simulator and verifies every JWS against the exported `root.pem`.
struct ServerAPIClient: Sendable {
    let connection: TestConnection
    var token: TestAPIToken
    let verifier: TestJWSVerifier

    /// Exports the server's identity to a temporary directory and reads it back as a client would.
    static func connect(to server: SimulatorServer) async throws -> ServerAPIClient {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("sim-api-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try server.serverAPI.identity.export(to: dir)
        let p8 = try String(contentsOfFile: dir + "/key.p8", encoding: .utf8)
        let apiData = try Data(contentsOf: URL(fileURLWithPath: dir + "/api.json"))
        let api = try JSONSerialization.jsonObject(with: apiData) as? [String: Any] ?? [:]
        let rootPEM = try String(contentsOfFile: dir + "/root.pem", encoding: .utf8)
        return ServerAPIClient(
            connection: try await TestConnection.connect(port: server.port),
            token: try TestAPIToken(p8: p8, apiJSON: api),
            verifier: try TestJWSVerifier(rootPEM: rootPEM)
        )
    }

    /// Without `token`, signs with the client's own token issued now, as a client re-mints its token before it
    /// expires (long runs outlive one token's 5 minutes).
    func get(_ path: String, token: TestAPIToken? = nil) async throws -> TestResponse {
        try await connection.send(.GET, path, headers: [(token ?? fresh).authorization])
    }

    var fresh: TestAPIToken {
        var current = token
        current.issuedAt = Int64(Date().timeIntervalSince1970)
        return current
    }

    /// The base path of an environment: production at the root, sandbox under `/sandbox`.
    static func base(sandbox: Bool) -> String { sandbox ? "/sandbox" : "" }

    func close() async { await connection.close() }
}
