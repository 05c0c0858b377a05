import ArgumentParser
import Foundation
import Reconciler

struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Apply pending schema migrations from sql/ (idempotent).",
        discussion: """
            Applies the numbered files in the migrations directory (NNN_name.sql) that are not yet recorded in \
            schema_migrations, in order, each inside its own transaction. Running it twice changes nothing. \
            Concurrent invocations are serialised by an advisory lock. Migrations are forward-only.

            The directory is, in order: --sql-dir, $RENEWAL_RECONCILER_SQL_DIR, ./sql, the sql/ folder of the \
            source tree the binary was built in, /usr/share/renewal-reconciler/sql.
            """
    )

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var logging: LoggingOptions

    @Option(name: .long, help: "Directory holding NNN_name.sql migration files.")
    var sqlDir: String?

    @Flag(name: .long, help: "List applied and pending migrations without applying anything.")
    var status = false

    func run() throws {
        logging.bootstrap()
        try runReportingErrors {
            let url = try database.connectionString()
            let directory = try MigrationDirectory.locate(explicit: sqlDir)
            let migrator = Migrator(connectionString: url, directory: directory)
            if status {
                for line in try migrator.status() { print(line) }
                return
            }
            let applied = try migrator.migrate()
            if applied.isEmpty {
                print("schema is up to date (\(try migrator.currentVersion().map(String.init) ?? "empty"))")
            } else {
                for m in applied { print("applied \(m.fileName)") }
            }
        }
    }
}
