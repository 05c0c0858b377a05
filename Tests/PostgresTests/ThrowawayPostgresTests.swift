import Foundation
import Postgres
import TestSupport
import Testing

@Suite struct ThrowawayPostgresTests {
    @Test func startsOnTCPAndSocketAndStopRemovesDirectory() async throws {
        let cluster = try await OffPool.run { try ThrowawayPostgres() }
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
        try await OffPool.run { cluster.stop() }
        #expect(!FileManager.default.fileExists(atPath: cluster.directory))
        #expect(throws: PostgresError.self) { _ = try PostgresConnection(cluster.url + "?connect_timeout=2") }
    }

    #if os(Linux)
    /// Runs this test binary again as a child that starts a cluster and waits; SIGTERM must stop
    /// the cluster and delete its directory before the child dies of the signal.
    @Test func sigtermStopsAndRemovesTheCluster() async throws {
        let env = ProcessInfo.processInfo.environment
        if let reportFile = env["THROWAWAY_SIGNAL_CHILD_REPORT"] {
            let cluster = try ThrowawayPostgres()
            try cluster.directory.write(toFile: reportFile, atomically: true, encoding: .utf8)
            try await Task.sleep(for: .seconds(120))  // the parent kills us long before this
            Issue.record("child was not signalled")
            return
        }
        try await withTemporaryDirectoryAsync { temp in
            let report = temp.appendingPathComponent("dir.txt").path
            let child = try await ChildProcess(
                CommandLine.arguments[0],
                ["--testing-library", "swift-testing", "--filter", "sigtermStopsAndRemovesTheCluster"],
                environment: env.merging(["THROWAWAY_SIGNAL_CHILD_REPORT": report]) { $1 }
            )
            var directory: String?
            for _ in 0..<600 where directory == nil {  // 60 s safety limit
                directory = try? String(contentsOfFile: report, encoding: .utf8)
                if directory == nil { try await Task.sleep(for: .milliseconds(100)) }
            }
            let dir = try #require(directory)
            #expect(FileManager.default.fileExists(atPath: dir))
            child.signal(SIGTERM)
            let ended = await child.outcome(limit: .seconds(60))
            #expect(ended.reason == .uncaughtSignal)
            #expect(ended.status == SIGTERM)
            #expect(!FileManager.default.fileExists(atPath: dir))
        }
    }
    #endif
}
