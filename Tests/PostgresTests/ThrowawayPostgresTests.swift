import Foundation
import Postgres
import Testing

@Suite struct ThrowawayPostgresTests {
    @Test func startsOnTCPAndSocketAndStopRemovesDirectory() throws {
        let cluster = try ThrowawayPostgres()
        #expect(FileManager.default.fileExists(atPath: cluster.directory))
        #expect(cluster.url.hasPrefix("postgresql://postgres@127.0.0.1:"))
        let tcp = try PostgresConnection(cluster.url)
        #expect(try tcp.queryFirst("SHOW fsync")?.decode(0, as: String.self) == "off")
        let socket = try PostgresConnection(cluster.socketConnectionString)
        #expect(try socket.queryFirst("SELECT inet_client_addr() IS NULL AS unix")?.decode(0, as: Bool.self) == true)
        let other = try cluster.createDatabase("second_db")
        let conn = try PostgresConnection(other)
        #expect(try conn.queryFirst("SELECT current_database()")?.decode(0, as: String.self) == "second_db")
        tcp.close()
        socket.close()
        conn.close()
        cluster.stop()
        #expect(!FileManager.default.fileExists(atPath: cluster.directory))
        #expect(throws: PostgresError.self) { _ = try PostgresConnection(cluster.url + "?connect_timeout=2") }
    }
}
