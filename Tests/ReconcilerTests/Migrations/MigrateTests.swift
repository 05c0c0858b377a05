import Foundation
import Postgres
import Reconciler
import TestSupport
import Testing

/// `renewal-reconciler migrate` and the sql/ files themselves, against a real PostgreSQL.
@Suite struct MigrateTests {
    static var sqlFiles: [URL] {
        let dir = EndToEndFixture.packageRoot.appendingPathComponent("sql")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        return names.filter { $0.hasSuffix(".sql") }.sorted().map { dir.appendingPathComponent($0) }
    }

    @Test func migrateTwiceIsANoOpTheSecondTime() async throws {
        let world = try await EndToEndFixture(subscriptions: 0)  // the fixture ran `migrate` once
        let conn = try world.connect()
        defer { conn.close() }
        let before = try migrationRows(conn)
        #expect(before.count == Self.sqlFiles.count)
        #expect(before.count >= 2)
        let again = await world.runReconciler(["migrate"])
        #expect(again.status == 0, "\(again)")
        #expect(again.stdout.contains("schema is up to date"), "\(again.stdout)")
        #expect(!again.stdout.contains("applied"))
        #expect(try migrationRows(conn) == before)
        let status = await world.runReconciler(["migrate", "--status"])
        #expect(status.status == 0, "\(status)")
        let lines = status.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == Self.sqlFiles.count + 1, "\(status.stdout)")
        #expect(lines.dropLast().allSatisfy { $0.hasPrefix("applied") }, "\(status.stdout)")
        #expect(lines.last == "\(Self.sqlFiles.count) applied, 0 pending; migrations: built in", "\(status.stdout)")

        // A migration file edited after it was applied: --status says so.
        try conn.execute("UPDATE schema_migrations SET checksum = 'not the text built in' WHERE version = 3")
        let changed = await world.runReconciler(["migrate", "--status"])
        let third = changed.stdout.split(separator: "\n").first { $0.contains("003_") }.map(String.init) ?? ""
        #expect(third.contains("changed since it was applied"), "\(changed.stdout)")
    }

    @Test func aRunRefusesASchemaWithoutTheMigrationsItNeedsAndSaysHowToFixIt() async throws {
        // The build's requirement is the newest file in sql/.
        let newest = try #require(Self.sqlFiles.last?.lastPathComponent.prefix(3)).description
        #expect(SchemaRequirement.version == Int(newest))

        let world = try await EndToEndFixture(subscriptions: 0)
        let conn = try world.connect()
        defer { conn.close() }
        // A database one release behind: the newest migration not applied.
        try conn.execute("DELETE FROM schema_migrations WHERE version = $1", [Int64(SchemaRequirement.version)])
        let refused = await world.runReconciler(["run", "--now", EndToEndFixture.defaultNow])
        #expect(refused.status == 78, "\(refused)")
        #expect(refused.stderr.contains("lacks migration(s) \(SchemaRequirement.version)"), "\(refused.stderr)")
        #expect(refused.stderr.contains("renewal-reconciler migrate"), "\(refused.stderr)")
        #expect(try conn.count("SELECT count(*) AS n FROM reconciliation_runs") == 0)
    }

    @Test func eachSQLFileAppliesWithPlainPsqlAndMigrateThenAppliesNothing() async throws {
        let database = try TestDatabase.make()
        defer { database.drop() }
        for file in Self.sqlFiles {
            let psql = try await ChildProcess.run(
                "/usr/bin/env",
                ["psql", database.url, "-q", "-X", "-v", "ON_ERROR_STOP=1", "-1", "-f", file.path]
            )
            let text = psql.stderr
            #expect(psql.status == 0, "\(file.lastPathComponent): \(text)")
            #expect(!text.contains("ERROR"), "\(file.lastPathComponent): \(text)")
        }
        let conn = try database.connect()
        defer { conn.close() }
        let rows = try migrationRows(conn)
        #expect(
            rows.map { $0.split(separator: "|")[0] }
                == Self.sqlFiles.map { Substring(String(Int($0.lastPathComponent.prefix(3)) ?? 0)) }
        )
        #expect(SchemaRequirement.versions == Self.sqlFiles.map { Int($0.lastPathComponent.prefix(3)) ?? 0 })

        var env = ProcessInfo.processInfo.environment
        env["DATABASE_URL"] = database.url
        env.removeValue(forKey: "RENEWAL_RECONCILER_SQL_DIR")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rr-mig-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let migrate = try await RunningProcess(
            EndToEndFixture.reconcilerBinary,
            ["migrate"],
            environment: env,
            directory: dir
        )
        .wait()
        #expect(migrate.status == 0, "\(migrate)")
        #expect(migrate.stdout.contains("schema is up to date"), "\(migrate.stdout)")
        #expect(try migrationRows(conn) == rows)
    }

    private func migrationRows(_ conn: PostgresConnection) throws -> [String] {
        try conn.query(
            "SELECT version || '|' || name || '|' || applied_at AS line FROM schema_migrations ORDER BY version"
        )
        .map { try $0.decode("line", as: String.self) }
    }
}
