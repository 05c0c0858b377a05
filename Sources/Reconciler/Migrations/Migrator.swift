import Foundation
import Postgres

/// Applies the pending migrations in order, each in its own transaction, recording them in `schema_migrations`
/// with their checksum and whether older builds may run against them. Idempotent (a second run applies nothing)
/// and serialised across processes by an advisory lock, so several hosts starting at once apply each migration
/// once: one applies, the others wait, then find nothing to do (docs/operations.md, "Schema and migrations").
public struct Migrator {
    /// Advisory lock key for migrations (distinct from the run lock).
    public static let lockKey: Int64 = 0x5245_4E45_5741_4D49  // "RENEWAMI"

    public let connectionString: String
    public let source: MigrationSource

    public init(connectionString: String, source: MigrationSource) {
        self.connectionString = connectionString
        self.source = source
    }

    /// Applies the pending migrations; returns those applied now (empty when up to date). `waiting` is called
    /// once when another process holds the lock, before this one waits for it. Does no DDL when nothing is
    /// pending, so a role without DDL rights can run it on an up-to-date schema.
    /// - Throws: `ConfigurationError` (exit 78) when the database has a migration this source lacks that is not
    ///   rollback-compatible (`SchemaState.refuseIfNewer`); `MigrationError` for a migration that failed.
    @discardableResult
    public func migrate(waiting: () -> Void = {}) throws -> [Migration] {
        let conn = try PostgresConnection(connectionString)
        defer { conn.close() }
        let locked =
            try conn.queryFirst("SELECT pg_try_advisory_lock($1) AS locked", [Self.lockKey])?
            .decode("locked", as: Bool.self) ?? false
        if !locked {
            waiting()
            try conn.execute("SELECT pg_advisory_lock($1)", [Self.lockKey])
        }
        defer { _ = try? conn.execute("SELECT pg_advisory_unlock($1)", [Self.lockKey]) }
        let state = try SchemaState.read(conn)
        try state.refuseIfNewer(known: Set(source.migrations.map(\.version)))
        let done = Set(state.applied.map(\.version))
        let pending = source.migrations.filter { !done.contains($0.version) }
        guard let first = pending.first else { return [] }
        do {
            try ensureTable(conn)
        } catch {
            throw MigrationError(file: first.fileName, underlying: error)
        }
        for migration in pending {
            do {
                try conn.transaction { tx in
                    try tx.executeScript(migration.sql)
                    try tx.execute(
                        """
                        INSERT INTO schema_migrations (version, name, checksum, rollback_compatible)
                        VALUES ($1, $2, $3, $4)
                        ON CONFLICT (version) DO UPDATE
                            SET checksum = EXCLUDED.checksum, rollback_compatible = EXCLUDED.rollback_compatible
                        """,
                        [Int64(migration.version), migration.name, migration.checksum, migration.rollbackCompatible]
                    )
                }
            } catch {
                throw MigrationError(file: migration.fileName, underlying: error)
            }
        }
        return pending
    }

    /// The newest applied version, or nil for an empty database.
    public func currentVersion() throws -> Int? {
        let conn = try PostgresConnection(connectionString)
        defer { conn.close() }
        return try SchemaState.read(conn).applied.last?.version
    }

    /// The source's migrations and the database's, compared; read only.
    public func status() throws -> MigrationStatus {
        let conn = try PostgresConnection(connectionString)
        defer { conn.close() }
        return MigrationStatus(source: source, state: try SchemaState.read(conn))
    }

    /// `schema_migrations` with the columns this build records (001 creates the table without the last two).
    private func ensureTable(_ conn: PostgresConnection) throws {
        try conn.executeScript(
            """
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version    integer     PRIMARY KEY,
                name       text        NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now()
            );
            ALTER TABLE schema_migrations ADD COLUMN IF NOT EXISTS checksum text;
            ALTER TABLE schema_migrations ADD COLUMN IF NOT EXISTS rollback_compatible boolean;
            """
        )
    }
}

/// A migration failed: names the file and carries the server's message (SQLSTATE included).
public struct MigrationError: Error, CustomStringConvertible {
    public let file: String
    public let underlying: any Error
    public var description: String {
        // 42501: insufficient privilege, e.g. the nightly job's role (sql/roles/least_privilege.sql) has no DDL rights.
        let hint =
            (underlying as? PostgresError)?.sqlState == "42501"
            ? " (this role may not change the schema: run `renewal-reconciler migrate` as the schema's owner; "
                + "docs/operations.md, \"Database role\")" : ""
        return "migration \(file) failed and was rolled back: \(underlying)\(hint)"
    }
}
