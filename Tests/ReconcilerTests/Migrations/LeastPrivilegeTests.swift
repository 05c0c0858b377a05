import Foundation
import Postgres
import TestSupport
import Testing

/// `sql/roles/least_privilege.sql` applied to a migrated database, then the nightly job as `renewal_reconciler`: the
/// unit's `ExecStartPre=... migrate` needs no DDL when nothing is pending, a night and its outbox, trends and
/// retention work with the grants, and a pending migration fails by name without DDL rights (docs/operations.md,
/// "Database role"; docs/packaging.md, "Upgrade").
@Suite struct LeastPrivilegeTests {
    private static func url(_ url: String, user: String) throws -> String {
        var components = try #require(URLComponents(string: url))
        components.user = user
        components.password = nil
        return try #require(components.string)
    }

    @Test func theNightlyJobRunsAsTheLeastPrivilegedRoleAndItsMigrateIsQuietWhenUpToDate() async throws {
        let world = try await EndToEndFixture(subscriptions: 120)
        try await world.startSimulator()
        let roles = EndToEndFixture.packageRoot.appendingPathComponent("sql/roles/least_privilege.sql").path
        let applied = try await ChildProcess.run(
            "/usr/bin/env",
            ["psql", world.database.url, "-q", "-X", "-v", "ON_ERROR_STOP=1", "-f", roles]
        )
        #expect(applied.status == 0, "\(applied.stderr)")
        let job = ["DATABASE_URL": try Self.url(world.database.url, user: "renewal_reconciler")]

        // The role really is restricted.
        let jobConnection = try PostgresConnection(job["DATABASE_URL"]!)
        defer { jobConnection.close() }
        #expect(throws: (any Error).self) { try jobConnection.execute("CREATE TABLE not_allowed (id integer)") }

        let migrate = await world.runReconciler(["migrate"], extraEnvironment: job)
        #expect(migrate.status == 0, "\(migrate)")
        #expect(migrate.stdout.contains("schema is up to date"), "\(migrate.stdout)")

        let night = try await world.run(extraEnvironment: job)
        #expect(night.status == 0, "\(night)")
        let truth = try world.compareWithTruth()
        #expect(truth.matched == truth.compared && truth.compared == 120, "\(truth.mismatches.prefix(5))")
        for command in [["runs"], ["events", "export"], ["report", "--trends", "--out", world.directory.path + "/t"]] {
            let outcome = await world.runReconciler(command, extraEnvironment: job)
            #expect(outcome.status == 0, "\(command): \(outcome)")
        }
        let reader = ["DATABASE_URL": try Self.url(world.database.url, user: "renewal_reader")]
        let exported = await world.runReconciler(["events", "export"], extraEnvironment: reader)
        #expect(exported.status == 0, "\(exported)")

        // A pending migration needs the schema owner: the job's role fails naming it, and nothing is recorded.
        let newer = world.directory.appendingPathComponent("newer-sql")
        try FileManager.default.createDirectory(at: newer, withIntermediateDirectories: true)
        for file in MigrateTests.sqlFiles {
            try FileManager.default.copyItem(at: file, to: newer.appendingPathComponent(file.lastPathComponent))
        }
        try "CREATE TABLE needs_the_owner (id integer);\n".write(
            to: newer.appendingPathComponent("999_needs_the_owner.sql"),
            atomically: true,
            encoding: .utf8
        )
        let refused = await world.runReconciler(["migrate", "--sql-dir", newer.path], extraEnvironment: job)
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.stderr.contains("999_needs_the_owner.sql"), "\(refused.stderr)")
        #expect(refused.stderr.contains("permission denied"), "\(refused.stderr)")
        #expect(refused.stderr.contains("as the schema's owner"), "\(refused.stderr)")
        let owner = try world.connect()
        defer { owner.close() }
        #expect(
            try owner.queryFirst("SELECT count(*) AS n FROM schema_migrations WHERE version = 999")?.decode(
                "n",
                as: Int.self
            ) == 0
        )
    }
}
