import Foundation
import Postgres
import TestSupport
import Testing

// Postgres module API summary (the signatures other targets are written against):
//
//   final class PostgresConnection: @unchecked Sendable   // one thread at a time; concurrent use throws .concurrentUse
//     init(_ connectionString: String, retryAfterReconnect: Bool = true,
//          onNotice: (@Sendable (String) -> Void)? = nil) throws        // URI or key=value (DATABASE_URL)
//     @discardableResult func execute(_ sql: String, _ params: [(any PostgresEncodable)?] = []) throws -> PostgresResult
//     func query(_ sql: String, _ params: [(any PostgresEncodable)?] = []) throws -> [PostgresRow]
//     func queryFirst(_ sql: String, _ params: [(any PostgresEncodable)?] = []) throws -> PostgresRow?
//     @discardableResult func forEachRow(_ sql: String, _ params: [(any PostgresEncodable)?] = [],
//          _ body: (PostgresRow) throws -> Void) throws -> Int            // single-row mode streaming
//     func transaction<T>(_ body: (PostgresConnection) throws -> T) throws -> T   // nested = savepoints
//     func tryAdvisoryLock(key: Int64) throws -> Bool
//     @discardableResult func advisoryUnlock(key: Int64) throws -> Bool
//     func close(); var reconnectCount: Int; var heldAdvisoryLocks: Set<Int64>; let redactedConnectionString: String
//   struct PostgresResult: RandomAccessCollection<PostgresRow> { commandTag: String; rowsAffected: Int; rows; columnNames }
//   struct PostgresRow { index; columnNames; func decode<T: PostgresDecodable>(_ column: String, as: T.Type = T.self) throws -> T
//                        func decode<T>(_ column: Int, as:) throws -> T; func cell(_:) throws -> PostgresCell; subscript -> String? }
//   protocol PostgresEncodable  — String, Substring, Int, Int64, Int32, Bool, Double, Decimal, Date, Data, Optional, Array, PostgresValue
//   protocol PostgresDecodable  — String, Int, Int64, Int32, Bool, Double, Decimal, Date, Data, Optional, Array, PostgresValue
//   enum PostgresValue { null, text, int, bool, double, decimal, date, bytea, array(_:typeOID:); textArray(_:), int64Array(_:) }
//   struct PostgresError: Error { code: Code; sqlState: String?; message; detail; hint; statement;
//                                 isConnectionError; isUniqueViolation; isTransactionRetryable }
//     Code: .connection .connectionLostInTransaction .query .encoding .decoding .concurrentUse .closed
//           .transaction .cluster .advisoryLockLost
//   enum PostgresConnectionString { redacted(_:), replacingDatabase(in:with:) };  func redactedConnectionString(_:) -> String
//   final class ThrowawayPostgres { init(installSignalHandlers: Bool = true) throws; url; socketConnectionString; port;
//                                   directory; stop(); restart() throws; stopServer() throws; startAgain() throws;
//                                   createDatabase(_ name: String) throws -> String }
//   TestSupport: struct TestDatabase { static func make() throws -> TestDatabase; url; name; adminURL;
//                                      connect(onNotice:) throws -> PostgresConnection; drop(); static func serverURL() }
//                func withTemporaryDirectory<T>(_ body: (URL) throws -> T) throws -> T

/// The way the pipeline is expected to use the module, end to end.
@Suite struct APIUsageTests {
    @Test func batchUpsertInATransactionThenKeysetPaging() throws {
        let db = try TestDatabase.make()
        defer { db.drop() }
        let conn = try PostgresConnection(db.url)
        defer { conn.close() }
        try conn.execute(
            """
            CREATE TABLE subscriptions (
              original_transaction_id text PRIMARY KEY,
              expires_at timestamptz,
              price numeric(10,2),
              active boolean NOT NULL DEFAULT false)
            """
        )
        let ids = (1...250).map { String(format: "1000%08d", $0) }
        let expiries = ids.indices.map { Date(timeIntervalSince1970: 1_700_000_000 + Double($0) * 86_400) }
        let params: [PostgresValue] = [
            .textArray(ids), .array(expiries.map(PostgresValue.date), typeOID: PostgresTypeOID.timestamptzArray),
        ]
        let written = try conn.transaction { tx in
            try tx.execute(
                """
                INSERT INTO subscriptions (original_transaction_id, expires_at)
                SELECT * FROM unnest($1::text[], $2::timestamptz[])
                ON CONFLICT (original_transaction_id) DO UPDATE SET expires_at = EXCLUDED.expires_at
                """,
                params
            ).rowsAffected
        }
        #expect(written == 250)
        let updated = try conn.execute(
            "UPDATE subscriptions SET active = true, price = $2 WHERE expires_at > $1",
            [Date(timeIntervalSince1970: 1_700_000_000 + 200 * 86_400), Decimal(string: "9.99")]
        )
        #expect(updated.rowsAffected == 49)

        var after = ""
        var pages = 0
        var seen = 0
        while true {
            let page = try conn.query(
                "SELECT original_transaction_id, expires_at, price, active FROM subscriptions "
                    + "WHERE original_transaction_id > $1 ORDER BY original_transaction_id LIMIT $2",
                [after, 100]
            )
            guard let last = page.last else { break }
            for row in page {
                let expires: Date? = try row.decode("expires_at")
                let price: Decimal? = try row.decode("price")
                let active: Bool = try row.decode("active")
                #expect(expires != nil)
                #expect((price != nil) == active)
            }
            after = try last.decode("original_transaction_id")
            pages += 1
            seen += page.count
        }
        #expect(pages == 3)
        #expect(seen == 250)
    }
}
