import Foundation

/// The migrations `migrate` applies: the ones built into the binary, or those of a directory named by `--sql-dir`
/// or `$RENEWAL_RECONCILER_SQL_DIR` (an override: a DBA's reviewed copy, a test).
public struct MigrationSource: Sendable {
    /// Sorted by version, versions unique.
    public let migrations: [Migration]
    /// Where they come from, for messages: "built in" or the directory.
    public let origin: String

    /// - Throws: `ConfigurationError` for two migrations with one version.
    public init(migrations: [Migration], origin: String) throws {
        let sorted = migrations.sorted { $0.version < $1.version }
        for (a, b) in zip(sorted, sorted.dropFirst()) where a.version == b.version {
            throw ConfigurationError(
                "\(origin): two migrations with version \(a.version): \(a.fileName), \(b.fileName)"
            )
        }
        self.migrations = sorted
        self.origin = origin
    }

    /// `explicit` (from `--sql-dir`), else `$RENEWAL_RECONCILER_SQL_DIR`, else the migrations built in.
    /// - Throws: `ConfigurationError` naming the flag or variable whose directory is missing, empty or unreadable.
    public static func resolve(
        explicit: String?,
        builtIn: [Migration],
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> MigrationSource {
        if let explicit { return try directory(explicit, named: "--sql-dir") }
        if let env = environment["RENEWAL_RECONCILER_SQL_DIR"], !env.isEmpty {
            return try directory(env, named: "RENEWAL_RECONCILER_SQL_DIR")
        }
        return try MigrationSource(migrations: builtIn, origin: "built in")
    }

    /// The newest version, or 0 when there is none.
    public var newestVersion: Int { migrations.last?.version ?? 0 }

    private static func directory(_ path: String, named setting: String) throws -> MigrationSource {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ConfigurationError("\(setting): \(path) is not a directory")
        }
        let migrations = try MigrationDirectory(path: path).migrations()
        guard !migrations.isEmpty else { throw ConfigurationError("\(setting): \(path) holds no NNN_name.sql file") }
        return try MigrationSource(migrations: migrations, origin: path)
    }
}
