import Crypto
import Foundation
import Postgres
import Reconciler
import TestSupport
import Testing

/// The migrations built into the binary, `version`, several `migrate` at once, and a binary meeting a schema that a
/// newer build migrated (docs/operations.md, "Schema and migrations"), with the real binary and PostgreSQL.
@Suite struct SchemaVersionTests {
    /// A working directory without sql/ and an environment without RENEWAL_RECONCILER_SQL_DIR: only the binary.
    private static func bareEnvironment(_ url: String) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["DATABASE_URL"] = url
        env.removeValue(forKey: "RENEWAL_RECONCILER_SQL_DIR")
        return env
    }

    private static func emptyDirectory() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rr-bare-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    private static func sha256(_ url: URL) throws -> String {
        SHA256.hash(data: try Data(contentsOf: url)).map { String(format: "%02x", $0) }.joined()
    }

    @Test func theBinaryCarriesEverySQLFileByteForByteAndSaysWhichIsNewest() async throws {
        let database = try TestDatabase.make()
        defer { database.drop() }
        let dir = try Self.emptyDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let env = Self.bareEnvironment(database.url)
        let migrate = try await RunningProcess(
            EndToEndFixture.reconcilerBinary,
            ["migrate"],
            environment: env,
            directory: dir
        )
        .wait()
        #expect(migrate.status == 0, "\(migrate)")

        let conn = try database.connect()
        defer { conn.close() }
        let recorded = try conn.query("SELECT version, name, checksum FROM schema_migrations ORDER BY version").map {
            "\(try $0.decode("version", as: Int.self))|\(try $0.decode("name", as: String.self))|"
                + (try $0.decode("checksum", as: String?.self) ?? "none")
        }
        let files = MigrateTests.sqlFiles
        let expected = try files.map { file in
            let stem = file.deletingPathExtension().lastPathComponent
            let number = Int(stem.prefix(while: { $0 != "_" })) ?? -1
            return "\(number)|\(stem.drop(while: { $0 != "_" }).dropFirst())|\(try Self.sha256(file))"
        }
        // Every file, applied from the copy in the binary, each with the checksum of the file in sql/.
        #expect(recorded == expected)

        let version = try await RunningProcess(
            EndToEndFixture.reconcilerBinary,
            ["version", "--json"],
            environment: env,
            directory: dir
        )
        .wait()
        #expect(version.status == 0, "\(version)")
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(version.stdout.utf8)) as? [String: Any]
        )
        #expect(object["schema"] as? Int == SchemaRequirement.version)
        #expect(object["newest_migration"] as? String == files.last?.lastPathComponent)
        #expect(object["migrations"] as? Int == files.count)
        // --write-sql gives them back as files, identical to sql/'s.
        let written = dir.appendingPathComponent("written")
        let write = try await RunningProcess(
            EndToEndFixture.reconcilerBinary,
            ["migrate", "--write-sql", written.path],
            environment: env,
            directory: dir
        )
        .wait()
        #expect(write.status == 0, "\(write)")
        for file in files {
            let copy = written.appendingPathComponent(file.lastPathComponent)
            #expect(FileManager.default.contents(atPath: copy.path) == (try Data(contentsOf: file)), "\(copy.path)")
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: written.path)
        #expect(names.count == files.count, "\(names)")
        let commit = try #require(object["commit"] as? String)
        #expect(commit == "unknown" || (commit.count == 12 && commit.allSatisfy(\.isHexDigit)), "\(commit)")
    }

    @Test func severalMigratesAtOnceApplyEachMigrationOnceAndAllSucceed() async throws {
        let database = try TestDatabase.make()
        defer { database.drop() }
        let dir = try Self.emptyDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let env = Self.bareEnvironment(database.url)
        var running: [RunningProcess] = []
        for _ in 0..<4 {
            running.append(
                try await RunningProcess(
                    EndToEndFixture.reconcilerBinary,
                    ["migrate"],
                    environment: env,
                    directory: dir
                )
            )
        }
        var outcomes: [ProcessOutcome] = []
        for process in running { outcomes.append(await process.wait()) }
        #expect(outcomes.allSatisfy { $0.status == 0 }, "\(outcomes)")
        // One process applied the migrations; the others waited for its lock and found nothing to do.
        #expect(outcomes.filter { $0.stdout.contains("applied 001_initial.sql") }.count == 1, "\(outcomes)")
        #expect(outcomes.filter { $0.stdout.contains("schema is up to date") }.count == 3, "\(outcomes)")
        let conn = try database.connect()
        defer { conn.close() }
        let row = try #require(
            try conn.queryFirst("SELECT count(*) AS n, count(DISTINCT version) AS d FROM schema_migrations")
        )
        #expect(try row.decode("n", as: Int.self) == MigrateTests.sqlFiles.count)
        #expect(try row.decode("d", as: Int.self) == MigrateTests.sqlFiles.count)
    }

    /// sql/ plus a migration 025 of a newer build, with or without the rollback marker.
    private static func newerSQLDirectory(compatible: Bool) throws -> URL {
        let dir = try emptyDirectory()
        for file in MigrateTests.sqlFiles {
            try FileManager.default.copyItem(at: file, to: dir.appendingPathComponent(file.lastPathComponent))
        }
        let marker = compatible ? Migration.rollbackCompatibleMarker + "\n" : ""
        let text =
            "-- 025_newer_build.sql: a migration of a release after this one.\n\(marker)"
            + "CREATE TABLE newer_build_probe (id integer PRIMARY KEY);\n"
        try text.write(to: dir.appendingPathComponent("025_newer_build.sql"), atomically: true, encoding: .utf8)
        return dir
    }

    @Test func anOlderBuildRefusesASchemaANewerBuildMigratedWithExit78() async throws {
        let world = try await EndToEndFixture(subscriptions: 5)
        let newer = try Self.newerSQLDirectory(compatible: false)
        defer { try? FileManager.default.removeItem(at: newer) }
        let upgrade = await world.runReconciler(["migrate", "--sql-dir", newer.path])
        #expect(upgrade.status == 0, "\(upgrade)")
        #expect(upgrade.stdout.contains("applied 025_newer_build.sql"), "\(upgrade.stdout)")

        // This binary knows migrations up to SchemaRequirement.version: it is the older build now.
        let run = await world.runReconciler(["run", "--now", EndToEndFixture.defaultNow])
        #expect(run.status == 78, "\(run)")
        #expect(run.stderr.contains("newer than this build"), "\(run.stderr)")
        #expect(run.stderr.contains("025_newer_build.sql"), "\(run.stderr)")
        let migrate = await world.runReconciler(["migrate"])
        #expect(migrate.status == 78, "\(migrate)")
        let status = await world.runReconciler(["migrate", "--status"])
        #expect(status.status == 0, "\(status)")
        #expect(status.stdout.contains("newer    025_newer_build.sql"), "\(status.stdout)")
        #expect(status.stdout.contains("this build refuses to run (exit 78)"), "\(status.stdout)")
        let conn = try world.connect()
        defer { conn.close() }
        #expect(try conn.queryFirst("SELECT count(*) AS n FROM reconciliation_runs")?.decode("n", as: Int.self) == 0)
    }

    @Test func anOlderBuildRunsAgainstANewerSchemaWhoseNewMigrationsAreRollbackCompatible() async throws {
        let world = try await EndToEndFixture(subscriptions: 5)
        let newer = try Self.newerSQLDirectory(compatible: true)
        defer { try? FileManager.default.removeItem(at: newer) }
        let upgrade = await world.runReconciler(["migrate", "--sql-dir", newer.path])
        #expect(upgrade.status == 0, "\(upgrade)")

        let migrate = await world.runReconciler(["migrate"])
        #expect(migrate.status == 0, "\(migrate)")
        #expect(migrate.stdout.contains("migrated by a newer build"), "\(migrate.stdout)")
        try await world.startSimulator()
        let run = try await world.run()
        #expect(run.status == 0, "\(run)")
        let truth = try world.compareWithTruth()
        #expect(truth.matched == truth.compared && truth.compared == 5, "\(truth.mismatches)")
        let status = await world.runReconciler(["migrate", "--status"])
        #expect(status.stdout.contains("rollback-compatible: this build still runs"), "\(status.stdout)")
    }
}
