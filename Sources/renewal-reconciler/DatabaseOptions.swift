import ArgumentParser
import Foundation
import Logging
import Postgres
import Reconciler

/// `--database-url`: overrides DATABASE_URL. Refuses a password on the command line (visible in `ps`).
struct DatabaseOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "libpq connection string or URI; overrides DATABASE_URL. Must not contain a password "
                + "(use PGPASSWORD, ~/.pgpass or DATABASE_URL).",
            valueName: "url"
        )
    )
    var databaseURL: String?

    func connectionString() throws -> String {
        if let flag = databaseURL {
            if DatabaseURL.containsPassword(flag) {
                throw ConfigurationError(
                    "--database-url must not contain a password (it would be visible in `ps`): "
                        + "put it in DATABASE_URL, PGPASSWORD or ~/.pgpass"
                )
            }
            return flag
        }
        guard let env = ProcessInfo.processInfo.environment["DATABASE_URL"], !env.isEmpty else {
            throw ConfigurationError(
                "no database: set DATABASE_URL (e.g. postgresql://reconciler@db.internal/app) or pass --database-url"
            )
        }
        return env
    }

    /// A connection to a database whose schema has every migration this build needs (exit 78 naming the missing
    /// ones and `migrate` otherwise). The caller closes it.
    func migratedConnection() throws -> PostgresConnection {
        let connection = try PostgresConnection(try connectionString())
        do {
            try SchemaRequirement.check(connection)
        } catch {
            connection.close()
            throw error
        }
        return connection
    }

    /// The connection string, once the schema is checked as `migratedConnection` does: for commands whose own type
    /// opens the database.
    func checkedConnectionString() throws -> String {
        try migratedConnection().close()
        return try connectionString()
    }
}
