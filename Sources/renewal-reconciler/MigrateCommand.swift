import ArgumentParser
import Foundation
import Reconciler

struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Apply pending schema migrations (built into the binary; idempotent).",
        discussion: """
            Applies the migrations (NNN_name.sql) not yet recorded in schema_migrations, in order, each inside its \
            own transaction, recording each with its checksum. Running it twice changes nothing. Several processes \
            at once (hosts starting together after an upgrade) are serialised by an advisory lock: one applies, the \
            others wait and then find nothing to do. Migrations are forward-only.

            The migrations are the ones built into this binary (`renewal-reconciler version` names the newest); \
            --sql-dir or $RENEWAL_RECONCILER_SQL_DIR reads them from a directory instead.

            A database migrated by a newer build: when every migration this build does not know is marked \
            rollback-compatible, nothing is applied and it exits 0; otherwise it exits 78 (docs/operations.md, \
            "Schema and migrations").
            """
    )

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var logging: LoggingOptions

    @Option(name: .long, help: "Read the migrations from this directory of NNN_name.sql files instead.")
    var sqlDir: String?

    @Flag(name: .long, help: "List applied, pending and newer migrations without applying anything.")
    var status = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Write the migrations (built in, or --sql-dir's) into this directory as NNN_name.sql files, byte for "
                + "byte, and exit: a copy to review or to apply with psql. Needs no database.",
            valueName: "dir"
        )
    )
    var writeSQL: String?

    func run() throws {
        logging.bootstrap()
        try runReportingErrors {
            let source = try MigrationSource.resolve(explicit: sqlDir, builtIn: BuildInfo.migrations)
            if let writeSQL {
                for path in try source.write(to: writeSQL) { print("wrote \(path)") }
                return
            }
            let url = try database.connectionString()
            let migrator = Migrator(connectionString: url, source: source)
            if status {
                for line in try migrator.status().lines { print(line) }
                return
            }
            let applied = try migrator.migrate {
                FileHandle.standardError.write(
                    Data("migrate: another process is applying migrations; waiting for it to finish\n".utf8)
                )
            }
            for m in applied { print("applied \(m.fileName)") }
            let current = try migrator.currentVersion() ?? 0
            if current > source.newestVersion {
                print(
                    "schema is up to date for this build (\(source.newestVersion)); the database is at \(current), "
                        + "migrated by a newer build whose newer migrations are rollback-compatible"
                )
            } else if applied.isEmpty {
                print("schema is up to date (\(current))")
            }
        }
    }
}
