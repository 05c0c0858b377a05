import Postgres
import Testing
import TestSupport

@Suite struct SmokeTests {
    @Test func selectOne() throws {
        let db = try TestDatabase.make()
        let conn = try db.connect()
        let row = try #require(try conn.queryFirst("SELECT 1 + $1 AS n", [41]))
        #expect(try row.decode("n", as: Int.self) == 42)
    }
}
