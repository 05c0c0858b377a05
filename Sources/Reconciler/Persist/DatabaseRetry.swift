import Foundation
import Postgres

/// How a run rides out a lost database connection (docs/architecture.md, "PostgreSQL restarted"): the work is tried
/// again while the failure is a lost connection, waiting 1, 2, 4, 5, 5, ... seconds (about a minute in all with the
/// standard twelve attempts), and at once, for a few tens of milliseconds, after a deadlock or serialization failure
/// (SQLSTATE 40P01, 40001) that rolled the transaction back. The work must be safe to repeat.
struct DatabaseRetry: Sendable {
    /// Attempts after the first (0: fail at once).
    let retries: Int

    static let standard = DatabaseRetry(retries: 12)

    func run<T>(_ body: () throws -> T) throws -> T {
        var attempt = 0
        while true {
            do {
                return try body()
            } catch let error as PostgresError where error.isConnectionError && attempt < retries {
                attempt += 1
                Thread.sleep(forTimeInterval: min(5, pow(2, Double(attempt - 1))))
            } catch let error as PostgresError where error.isTransactionRetryable && attempt < retries {
                // Nothing of the transaction was written; the same work succeeds once the other one is done.
                attempt += 1
                Thread.sleep(forTimeInterval: 0.05 * Double(attempt))
            }
        }
    }

    /// A new connection, opened again while the server cannot be reached (a restart or failover under way).
    func connect(_ connectionString: String) throws -> PostgresConnection {
        try run { try PostgresConnection(connectionString) }
    }
}
