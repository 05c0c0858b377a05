import Postgres

/// The schema this build's code needs: every migration up to `version` applied, and none applied by a newer build
/// that is not rollback-compatible. Checked before a run takes its lock, so a binary deployed without
/// `renewal-reconciler migrate`, or an older binary after a newer one migrated, stops with a configuration error
/// (exit 78) that says what to do instead of failing on a missing column halfway through the night
/// (docs/operations.md, "Schema and migrations"). A test keeps `version` equal to the newest file in `sql/`.
public enum SchemaRequirement {
    public static let version = 24
    /// The migrations this build needs: every number up to `version`.
    public static let versions: [Int] = Array(1...version)

    /// Throws `ConfigurationError` naming the missing migration numbers when the database lacks any of them, or
    /// the newer ones when a newer build applied a migration that is not rollback-compatible.
    public static func check(_ conn: PostgresConnection) throws {
        let state = try SchemaState.read(conn)
        let missing = state.missing(versions)
        guard missing.isEmpty else {
            throw ConfigurationError(
                "the database schema lacks migration(s) \(missing.map(String.init).joined(separator: ", ")) that this "
                    + "build needs: run `renewal-reconciler migrate` first"
            )
        }
        try state.refuseIfNewer(known: Set(versions))
    }
}
