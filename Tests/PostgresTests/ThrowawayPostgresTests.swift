import Foundation
import Postgres
import TestSupport
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

    #if os(Linux)
    /// Runs this test binary again as a child that starts a cluster and waits; SIGTERM must stop
    /// the cluster and delete its directory before the child dies of the signal.
    @Test func sigtermStopsAndRemovesTheCluster() throws {
        let env = ProcessInfo.processInfo.environment
        if let reportFile = env["THROWAWAY_SIGNAL_CHILD_REPORT"] {
            let cluster = try ThrowawayPostgres()
            try cluster.directory.write(toFile: reportFile, atomically: true, encoding: .utf8)
            Thread.sleep(forTimeInterval: 120)  // the parent kills us long before this
            Issue.record("child was not signalled")
            return
        }
        try withTemporaryDirectory { temp in
            let report = temp.appendingPathComponent("dir.txt").path
            let child = Process()
            child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
            child.arguments = ["--testing-library", "swift-testing", "--filter", "sigtermStopsAndRemovesTheCluster"]
            child.environment = env.merging(["THROWAWAY_SIGNAL_CHILD_REPORT": report]) { $1 }
            child.standardOutput = FileHandle.nullDevice
            child.standardError = FileHandle.nullDevice
            try child.run()
            var directory: String?
            for _ in 0..<600 where directory == nil {  // 60 s safety limit
                directory = try? String(contentsOfFile: report, encoding: .utf8)
                if directory == nil { Thread.sleep(forTimeInterval: 0.1) }
            }
            let dir = try #require(directory)
            #expect(FileManager.default.fileExists(atPath: dir))
            kill(child.processIdentifier, SIGTERM)
            child.waitUntilExit()
            #expect(child.terminationReason == .uncaughtSignal)
            #expect(child.terminationStatus == SIGTERM)
            #expect(!FileManager.default.fileExists(atPath: dir))
        }
    }
    #endif
}
