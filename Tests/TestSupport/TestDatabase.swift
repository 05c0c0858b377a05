import Foundation
import Postgres

/// A fresh, empty database for one test: tests running in parallel never see each other's rows.
///
/// Uses `$DATABASE_URL`'s server when set (it must allow CREATE DATABASE), otherwise one private
/// `ThrowawayPostgres` started lazily for the whole test process and removed at exit.
public struct TestDatabase: Sendable {
    /// Connection URL of the fresh database.
    public let url: String
    /// The database name (`test_<random>`).
    public let name: String
    /// URL of the maintenance database on the same server (for CREATE/DROP DATABASE).
    public let adminURL: String

    /// Creates a new database `test_<random>` on the shared server (or on the server at `server`, a URL of its
    /// maintenance database, e.g. a test's own `ThrowawayPostgres` it restarts) and returns its URL.
    public static func make(server: String? = nil) throws -> TestDatabase {
        let admin = try server ?? serverURL()
        let name = "test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(20)
        let connection = try PostgresConnection(admin)
        defer { connection.close() }
        try connection.execute("CREATE DATABASE \(name)")
        return TestDatabase(
            url: PostgresConnectionString.replacingDatabase(in: admin, with: String(name)),
            name: String(name),
            adminURL: admin
        )
    }

    /// Opens a connection to this database.
    public func connect(onNotice: (@Sendable (String) -> Void)? = nil) throws -> PostgresConnection {
        try PostgresConnection(url, onNotice: onNotice)
    }

    /// Drops the database (best effort; terminates its remaining connections first).
    public func drop() {
        guard let connection = try? PostgresConnection(adminURL) else { return }
        defer { connection.close() }
        _ = try? connection.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }

    /// The shared server: `$DATABASE_URL` or the process-wide throwaway cluster.
    public static func serverURL() throws -> String {
        if let url = ProcessInfo.processInfo.environment["DATABASE_URL"], !url.isEmpty { return url }
        return try sharedCluster.get().url
    }

    /// Started on first use (Swift initialises static lets once, thread-safely).
    private static let sharedCluster = Result { try ThrowawayPostgres() }
}

/// Runs `body` with a new empty temporary directory, removed afterwards.
public func withTemporaryDirectory<T>(_ body: (URL) throws -> T) throws -> T {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("rr-test-" + UUID().uuidString)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: url) }
    return try body(url)
}

/// Runs `body` with a new empty temporary directory, removed afterwards (for bodies that await).
public func withTemporaryDirectoryAsync<T>(_ body: (URL) async throws -> T) async throws -> T {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("rr-test-" + UUID().uuidString)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: url) }
    return try await body(url)
}
