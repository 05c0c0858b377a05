import Foundation
import Postgres
import Testing

/// Each test restarts its own cluster, never the shared one.
@Suite struct ReconnectTests {
    @Test func reconnectsAfterServerRestart() throws {
        let cluster = try ThrowawayPostgres()
        defer { cluster.stop() }
        let conn = try PostgresConnection(cluster.url)
        try conn.execute("CREATE TABLE t (id int)")
        #expect(try conn.queryFirst("SELECT 1 AS n")?.decode("n", as: Int.self) == 1)
        let pidBefore = try conn.queryFirst("SELECT pg_backend_pid() AS p")?.decode("p", as: Int.self)

        try cluster.restart()

        // The statement is retried once on a fresh connection: the caller sees no error.
        try conn.execute("INSERT INTO t VALUES ($1)", [1])
        #expect(conn.reconnectCount == 1)
        let pidAfter = try conn.queryFirst("SELECT pg_backend_pid() AS p")?.decode("p", as: Int.self)
        #expect(pidBefore != pidAfter)
        #expect(try conn.queryFirst("SELECT count(*) AS n FROM t")?.decode("n", as: Int.self) == 1)
        // Session settings are restored after the reconnect.
        #expect(try conn.queryFirst("SHOW TimeZone")?.decode(0, as: String.self) == "UTC")
    }

    @Test func connectionLostInsideTransactionIsNotRetried() throws {
        let cluster = try ThrowawayPostgres()
        defer { cluster.stop() }
        let conn = try PostgresConnection(cluster.url)
        try conn.execute("CREATE TABLE t (id int)")
        var attempts = 0
        var lost: PostgresError?
        // The caller's retry loop: the whole transaction runs again.
        for _ in 0..<2 {
            attempts += 1
            do {
                try conn.transaction { tx in
                    try tx.execute("INSERT INTO t VALUES (1)")
                    if attempts == 1 { try cluster.restart() }
                    try tx.execute("INSERT INTO t VALUES (2)")
                }
                break
            } catch let error as PostgresError where error.isConnectionError {
                lost = error
            }
        }
        #expect(lost?.code == .connectionLostInTransaction)
        #expect(attempts == 2)
        let ids = try conn.query("SELECT id FROM t ORDER BY id").map { try $0.decode("id", as: Int.self) }
        #expect(ids == [1, 2])
    }

    @Test func aConnectionLostWithTheCommitReconnectsForTheNextTransaction() throws {
        let cluster = try ThrowawayPostgres()
        defer { cluster.stop() }
        let conn = try PostgresConnection(cluster.url)
        try conn.execute("CREATE TABLE t (id int)")
        // The body ends normally, then the server restarts: the COMMIT meets a dead connection.
        let error = #expect(throws: PostgresError.self) {
            try conn.transaction { tx in
                try tx.execute("INSERT INTO t VALUES (1)")
                try cluster.restart()
            }
        }
        #expect(error?.code == .connectionLostInTransaction, "\(String(describing: error))")
        // The next transaction reconnects: a lost COMMIT does not leave the connection refusing every statement
        // (a worker's heartbeat connection did, forever, after a server restart).
        try conn.transaction { tx in try tx.execute("INSERT INTO t VALUES (2)") }
        let ids = try conn.query("SELECT id FROM t ORDER BY id").map { try $0.decode("id", as: Int.self) }
        #expect(ids == [2])
        #expect(conn.reconnectCount == 1)
    }

    @Test func serverDownIsAConnectionErrorThenRecovers() throws {
        let cluster = try ThrowawayPostgres()
        defer { cluster.stop() }
        let conn = try PostgresConnection(cluster.url)
        try cluster.stopServer()
        let error = #expect(throws: PostgresError.self) { try conn.execute("SELECT 1") }
        #expect(error?.isConnectionError == true)
        try cluster.startAgain()
        #expect(try conn.queryFirst("SELECT 2 AS n")?.decode("n", as: Int.self) == 2)
    }

    @Test func advisoryLockIsRetakenAfterReconnect() throws {
        let cluster = try ThrowawayPostgres()
        defer { cluster.stop() }
        let holder = try PostgresConnection(cluster.url)
        #expect(try holder.tryAdvisoryLock(key: 77))
        try cluster.restart()
        _ = try holder.execute("SELECT 1")  // reconnects and re-takes the lock
        let other = try PostgresConnection(cluster.url)
        #expect(try other.tryAdvisoryLock(key: 77) == false)
    }

    @Test func sharedAdvisoryLockIsRetakenSharedAfterReconnect() throws {
        let cluster = try ThrowawayPostgres()
        defer { cluster.stop() }
        let first = try PostgresConnection(cluster.url)
        let second = try PostgresConnection(cluster.url)
        #expect(try first.tryAdvisoryLockShared(key: 78))
        #expect(try second.tryAdvisoryLockShared(key: 78))
        #expect(first.heldSharedAdvisoryLocks == [78])
        try cluster.restart()
        _ = try first.execute("SELECT 1")  // reconnects and re-takes the lock, shared
        _ = try second.execute("SELECT 1")
        #expect(first.reconnectCount == 1 && second.reconnectCount == 1)
        let exclusive = try PostgresConnection(cluster.url)
        #expect(try exclusive.tryAdvisoryLock(key: 78) == false, "both shared holders took it again")
        #expect(try first.advisoryUnlock(key: 78))
        #expect(try second.advisoryUnlock(key: 78))
        #expect(try exclusive.tryAdvisoryLock(key: 78), "released in shared mode by both")
    }

    @Test func anExclusiveHolderMeanwhileMakesTheSharedLockLost() throws {
        let cluster = try ThrowawayPostgres()
        defer { cluster.stop() }
        let worker = try PostgresConnection(cluster.url)
        #expect(try worker.tryAdvisoryLockShared(key: 79))
        try cluster.restart()
        let oneProcess = try PostgresConnection(cluster.url)
        #expect(try oneProcess.tryAdvisoryLock(key: 79))
        let error = #expect(throws: PostgresError.self) { try worker.execute("SELECT 1") }
        #expect(error?.code == .advisoryLockLost)
        #expect(worker.heldAdvisoryLocks.isEmpty)
    }
}
