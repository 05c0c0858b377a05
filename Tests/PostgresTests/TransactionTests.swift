import Foundation
import Postgres
import TestSupport
import Testing

@Suite struct TransactionTests {
    struct Boom: Error {}

    @Test func commitsOnSuccessAndRollsBackOnThrow() throws {
        let conn = try TestDatabase.make().connect()
        try conn.execute("CREATE TABLE t (id int PRIMARY KEY)")
        let value = try conn.transaction { tx in
            try tx.execute("INSERT INTO t VALUES ($1)", [1])
            return "done"
        }
        #expect(value == "done")
        #expect(throws: Boom.self) {
            try conn.transaction { tx in
                try tx.execute("INSERT INTO t VALUES ($1)", [2])
                throw Boom()
            }
        }
        let ids = try conn.query("SELECT id FROM t ORDER BY id").map { try $0.decode("id", as: Int.self) }
        #expect(ids == [1])
    }

    @Test func nestedTransactionsUseSavepoints() throws {
        let conn = try TestDatabase.make().connect()
        try conn.execute("CREATE TABLE t (id int PRIMARY KEY)")
        try conn.transaction { tx in
            try tx.execute("INSERT INTO t VALUES (1)")
            // One bad row does not lose the batch.
            let inner = #expect(throws: PostgresError.self) {
                try tx.transaction { inner in try inner.execute("INSERT INTO t VALUES (1)") }
            }
            #expect(inner?.sqlState == "23505")
            try tx.execute("INSERT INTO t VALUES (2)")
        }
        let ids = try conn.query("SELECT id FROM t ORDER BY id").map { try $0.decode("id", as: Int.self) }
        #expect(ids == [1, 2])
    }

    @Test func swallowedStatementErrorDoesNotSilentlyCommit() throws {
        let conn = try TestDatabase.make().connect()
        try conn.execute("CREATE TABLE t (id int PRIMARY KEY)")
        let error = #expect(throws: PostgresError.self) {
            try conn.transaction { tx in
                try tx.execute("INSERT INTO t VALUES (1)")
                _ = try? tx.execute("INSERT INTO t VALUES (1)")
            }
        }
        #expect(error?.code == .transaction)
        #expect(try conn.queryFirst("SELECT count(*) AS n FROM t")?.decode("n", as: Int.self) == 0)
    }

    @Test func advisoryLockHeldByOneConnectionIsRefusedToAnother() async throws {
        let db = try TestDatabase.make()
        let first = try db.connect()
        let second = try db.connect()
        let key: Int64 = 0x5eed_0001
        #expect(try first.tryAdvisoryLock(key: key))
        #expect(first.heldAdvisoryLocks == [key])
        #expect(try second.tryAdvisoryLock(key: key) == false)
        #expect(try first.advisoryUnlock(key: key))
        #expect(try second.tryAdvisoryLock(key: key))
        #expect(try first.tryAdvisoryLock(key: key) == false)
        // Closing the holder releases a session lock (once its backend has exited: poll, 10 s safety limit).
        second.close()
        var taken = false
        for _ in 0..<100 where !taken {
            taken = try first.tryAdvisoryLock(key: key)
            if !taken { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(taken)
    }
}
