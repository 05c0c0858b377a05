import Foundation
import Postgres
import TestSupport
import Testing

@Suite struct ErrorTests {
    @Test func uniqueViolationSurfacesSQLState() throws {
        let conn = try TestDatabase.make().connect()
        try conn.execute("CREATE TABLE t (id text PRIMARY KEY)")
        try conn.execute("INSERT INTO t VALUES ($1)", ["dup"])
        let error = #expect(throws: PostgresError.self) { try conn.execute("INSERT INTO t VALUES ($1)", ["dup"]) }
        #expect(error?.sqlState == "23505")
        #expect(error?.isUniqueViolation == true)
        #expect(error?.isConnectionError == false)
        #expect(error?.code == .query)
        #expect(error?.detail?.contains("dup") == true)
        // The connection keeps working after a statement error.
        #expect(try conn.queryFirst("SELECT count(*) AS n FROM t")?.decode("n", as: Int.self) == 1)
    }

    @Test func longServerTextsAreTruncatedInDescription() throws {
        let conn = try TestDatabase.make().connect()
        try conn.execute("CREATE TABLE r (receipt text PRIMARY KEY)")
        let receipt = String(repeating: "MIIT", count: 2_000)
        try conn.execute("INSERT INTO r VALUES ($1)", [receipt])
        let error = #expect(throws: PostgresError.self) { try conn.execute("INSERT INTO r VALUES ($1)", [receipt]) }
        let description = error?.description ?? ""
        #expect(!description.contains(receipt))
        #expect(description.count < 1_200)
    }

    @Test func badPasswordErrorNeverShowsThePassword() throws {
        let server = try TestDatabase.serverURL()
        // Point at a port nobody listens on, with a password in both forms.
        let secret = "S3cr3t-pa55"
        for connectionString in [
            "postgresql://postgres:\(secret)@127.0.0.1:1/postgres?connect_timeout=3",
            "host=127.0.0.1 port=1 user=postgres password=\(secret) connect_timeout=3",
            "host=127.0.0.1 port=1 password='\(secret) with space' connect_timeout=3",
            "postgresql://postgres:\(secret)@127.0.0.1:1/postgres?sslmode=bogus",
            "postgresql://postgres:\(secret)%zz@127.0.0.1:1/postgres",
        ] {
            let error = #expect(throws: PostgresError.self) { _ = try PostgresConnection(connectionString) }
            #expect(error?.isConnectionError == true)
            #expect(error?.description.contains(secret) == false, "\(error?.description ?? "")")
        }
        #expect(!server.isEmpty)
    }

    @Test(arguments: [
        ("postgresql://app:hunter2@db:5432/rr", "postgresql://app:***@db:5432/rr"),
        (
            "postgres://app:hunter2@db/rr?sslmode=require&password=hunter2",
            "postgres://app:***@db/rr?sslmode=require&password=***"
        ),
        ("postgresql://app@db/rr", "postgresql://app@db/rr"),
        ("host=db user=app password=hunter2 dbname=rr", "host=db user=app password=*** dbname=rr"),
        ("host=db password = 'hun ter\\'2' dbname=rr", "host=db password=*** dbname=rr"),
        ("host=db password='unterminated", "<unparseable connection string>"),
    ])
    func redaction(_ input: String, _ expected: String) {
        #expect(redactedConnectionString(input) == expected)
        #expect(!redactedConnectionString(input).contains("hunter2"))
    }

    @Test func replacingDatabase() {
        #expect(
            PostgresConnectionString.replacingDatabase(in: "postgresql://u:p@h:5/old?sslmode=disable", with: "new")
                == "postgresql://u:p@h:5/new?sslmode=disable"
        )
        #expect(PostgresConnectionString.replacingDatabase(in: "postgresql://h", with: "new") == "postgresql://h/new")
        #expect(
            PostgresConnectionString.replacingDatabase(in: "host=h dbname=old", with: "new")
                == "host=h dbname=old dbname=new"
        )
    }

    @Test func concurrentUseIsRefusedNotCorrupting() async throws {
        let conn = try TestDatabase.make().connect()
        // Two threads hammer one connection: each call either succeeds or is refused cleanly.
        let outcomes = await withTaskGroup(of: (ok: Int, refused: Int).self) { group in
            for _ in 0..<2 {
                group.addTask {
                    var ok = 0
                    var refused = 0
                    for _ in 0..<200 {
                        do {
                            let n = try conn.queryFirst("SELECT $1::int AS n", [7])?.decode("n", as: Int.self)
                            if n == 7 { ok += 1 }
                        } catch let error as PostgresError where error.code == .concurrentUse {
                            refused += 1
                        } catch {}
                    }
                    return (ok, refused)
                }
            }
            var total = (ok: 0, refused: 0)
            for await outcome in group {
                total.ok += outcome.ok
                total.refused += outcome.refused
            }
            return total
        }
        #expect(outcomes.ok + outcomes.refused == 400)
        #expect(try conn.queryFirst("SELECT 1 AS n")?.decode("n", as: Int.self) == 1)
    }

    @Test func noticesGoToTheCallback() throws {
        let received = NoticeLog()
        let conn = try TestDatabase.make().connect { received.append($0) }
        try conn.execute("DO $$ BEGIN RAISE NOTICE 'hello from plpgsql'; END $$")
        #expect(received.messages.contains { $0.contains("hello from plpgsql") })
    }
}

final class NoticeLog: @unchecked Sendable {
    // Guarded by `lock`: notices arrive on the thread running the statement.
    private let lock = NSLock()
    private var storage: [String] = []
    func append(_ message: String) { lock.withLock { storage.append(message) } }
    var messages: [String] { lock.withLock { storage } }
}
