import Foundation
import Postgres

/// Applies the numbered migration files in order, each in its own transaction, recording them in
/// `schema_migrations`. Idempotent (a second run applies nothing) and serialised across processes by
/// an advisory lock, so two hosts starting at once cannot apply the same file twice.
public struct Migrator {
    /// Advisory lock key for migrations (distinct from the run lock).
    public static let lockKey: Int64 = 0x5245_4E45_5741_4D49  // "RENEWAMI"

    public let connectionString: String
    public let directory: MigrationDirectory

    public init(connectionString: String, directory: MigrationDirectory) {
        self.connectionString = connectionString
        self.directory = directory
    }

    /// Applies the pending migrations; returns the files applied now (empty when up to date).
    @discardableResult
    public func migrate() throws -> [MigrationFile] {
        let files = try directory.files()
        let conn = try PostgresConnection(connectionString)
        defer { conn.close() }
        try conn.execute("SELECT pg_advisory_lock($1)", [Self.lockKey])
        defer { _ = try? conn.execute("SELECT pg_advisory_unlock($1)", [Self.lockKey]) }
        try ensureTable(conn)
        let applied = try appliedVersions(conn)
        var done: [MigrationFile] = []
        for file in files where !applied.contains(file.version) {
            guard let data = FileManager.default.contents(atPath: file.path),
                let sql = String(data: data, encoding: .utf8)
            else {
                throw ConfigurationError("cannot read migration \(file.path)")
            }
            do {
                try conn.transaction { tx in
                    try tx.executeScript(sql)
                    try tx.execute(
                        "INSERT INTO schema_migrations (version, name) VALUES ($1, $2) ON CONFLICT (version) DO NOTHING",
                        [Int64(file.version), file.name]
                    )
                }
            } catch {
                throw MigrationError(file: file.fileName, underlying: error)
            }
            done.append(file)
        }
        return done
    }

    /// The highest applied version, or nil for an empty database.
    public func currentVersion() throws -> Int? {
        let conn = try PostgresConnection(connectionString)
        defer { conn.close() }
        try ensureTable(conn)
        return try appliedVersions(conn).max()
    }

    /// One line per migration file (`applied` / `pending`), plus any applied version this build lacks.
    public func status() throws -> [String] {
        let files = try directory.files()
        let conn = try PostgresConnection(connectionString)
        defer { conn.close() }
        let exists =
            try conn.queryFirst("SELECT to_regclass('schema_migrations') IS NOT NULL AS e")?
            .decode("e", as: Bool.self) ?? false
        let applied = exists ? try appliedVersions(conn) : []
        var lines = files.map { "\(applied.contains($0.version) ? "applied" : "pending")  \($0.fileName)" }
        let known = Set(files.map(\.version))
        for version in applied.sorted() where !known.contains(version) {
            lines.append("unknown  version \(version) is applied but has no file in \(directory.path) (newer build?)")
        }
        return lines
    }

    private func ensureTable(_ conn: PostgresConnection) throws {
        try conn.execute(
            """
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version    integer     PRIMARY KEY,
                name       text        NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now()
            )
            """
        )
    }

    private func appliedVersions(_ conn: PostgresConnection) throws -> Set<Int> {
        Set(try conn.query("SELECT version FROM schema_migrations").map { try $0.decode("version", as: Int.self) })
    }
}

/// A migration file failed: names the file and carries the server's message (SQLSTATE included).
public struct MigrationError: Error, CustomStringConvertible {
    public let file: String
    public let underlying: any Error
    public var description: String { "migration \(file) failed and was rolled back: \(underlying)" }
}
