import Postgres

/// The migrations a database has applied, as `schema_migrations` records them, and the one rule for a binary
/// meeting a schema newer than itself (docs/operations.md, "Schema and migrations"): it runs only when every
/// migration it does not know is marked `-- rollback: compatible`, else it stops with exit 78.
public struct SchemaState: Sendable {
    /// One row of `schema_migrations`. `checksum` and `rollbackCompatible` are nil for a migration applied by a
    /// build before they were recorded (or by plain psql).
    public struct Applied: Sendable, Equatable {
        public let version: Int
        public let name: String
        /// UTC, `YYYY-MM-DD HH:MM:SSZ`.
        public let appliedAt: String
        public let checksum: String?
        public let rollbackCompatible: Bool?

        public init(version: Int, name: String, appliedAt: String, checksum: String?, rollbackCompatible: Bool?) {
            self.version = version
            self.name = name
            self.appliedAt = appliedAt
            self.checksum = checksum
            self.rollbackCompatible = rollbackCompatible
        }

        public var fileName: String { Migration(version: version, name: name, sql: "").fileName }
    }

    /// Sorted by version; empty for a database without `schema_migrations`.
    public let applied: [Applied]

    public init(applied: [Applied]) { self.applied = applied.sorted { $0.version < $1.version } }

    /// Reads `schema_migrations`, whichever build created it (the columns added later are read when present).
    public static func read(_ conn: PostgresConnection) throws -> SchemaState {
        let exists =
            try conn.queryFirst("SELECT to_regclass('schema_migrations') IS NOT NULL AS present")?
            .decode("present", as: Bool.self) ?? false
        guard exists else { return SchemaState(applied: []) }
        let rows = try conn.query(
            """
            SELECT version, name, to_char(applied_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS"Z"') AS applied_at,
                   to_jsonb(m) ->> 'checksum' AS checksum,
                   (to_jsonb(m) ->> 'rollback_compatible')::boolean AS rollback_compatible
            FROM schema_migrations m ORDER BY version
            """
        )
        return SchemaState(
            applied: try rows.map {
                Applied(
                    version: try $0.decode("version"),
                    name: try $0.decode("name"),
                    appliedAt: try $0.decode("applied_at"),
                    checksum: try $0.decode("checksum"),
                    rollbackCompatible: try $0.decode("rollback_compatible")
                )
            }
        )
    }

    /// The versions among `required` the database has not applied.
    public func missing(_ required: [Int]) -> [Int] {
        let versions = Set(applied.map(\.version))
        return required.filter { !versions.contains($0) }
    }

    /// The applied migrations a build that knows `known` does not: a newer build applied them.
    public func unknown(known: Set<Int>) -> [Applied] { applied.filter { !known.contains($0.version) } }

    /// Refuses a schema with a migration unknown to this build and not marked rollback-compatible; returns the
    /// unknown ones that are (the caller may say so).
    /// - Throws: `ConfigurationError` (exit 78) naming them and what to do.
    @discardableResult
    public func refuseIfNewer(known: Set<Int>) throws -> [Applied] {
        let newer = unknown(known: known)
        let refused = newer.filter { $0.rollbackCompatible != true }
        guard refused.isEmpty else {
            let names = refused.map(\.fileName).joined(separator: ", ")
            throw ConfigurationError(
                "the database schema is newer than this build (which knows migrations up to \(known.max() ?? 0)): "
                    + "\(names) applied by a newer renewal-reconciler and not marked rollback-compatible, so this "
                    + "build cannot run against it safely: run the release that applied them (`renewal-reconciler "
                    + "version` prints the newest migration a build knows; docs/operations.md, \"Rolling back\")"
            )
        }
        return newer
    }
}
