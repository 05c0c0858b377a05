import Postgres

/// The schema this build's run needs: every migration up to `version` applied. Checked before a run takes
/// its lock, so a binary deployed without `renewal-reconciler migrate` stops with a configuration error
/// (exit 78) that says what to do, instead of failing on a missing column halfway through the night
/// (docs/operations.md, "Schema and migrations"). A test keeps `version` equal to the newest file in `sql/`.
public enum SchemaRequirement {
    public static let version = 24
    /// The migrations this build needs: every number up to `version`.
    public static let versions: [Int] = Array(1...version)

    /// Throws `ConfigurationError` naming the missing migration numbers when the database lacks any of them.
    public static func check(_ conn: PostgresConnection) throws {
        let exists =
            try conn.queryFirst("SELECT to_regclass('schema_migrations') IS NOT NULL AS present")?
            .decode("present", as: Bool.self) ?? false
        var applied = Set<Int>()
        if exists {
            applied = Set(
                try conn.query("SELECT version FROM schema_migrations").map { try $0.decode("version", as: Int.self) }
            )
        }
        let missing = versions.filter { !applied.contains($0) }
        guard missing.isEmpty else {
            throw ConfigurationError(
                "the database schema lacks migration(s) \(missing.map(String.init).joined(separator: ", ")) that this "
                    + "build needs: run `renewal-reconciler migrate` (with the new release's sql/ directory) first"
            )
        }
    }
}
