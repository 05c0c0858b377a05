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

    /// Writes each migration into `directory` (created when missing) as `NNN_name.sql`, byte for byte; returns the
    /// paths written. An existing file with other content is not overwritten.
    /// - Throws: `ConfigurationError` naming the path that could not be written or differs.
    public func write(to directory: String) throws -> [String] {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw ConfigurationError("--write-sql: cannot create \(directory): \(error.localizedDescription)")
        }
        return try migrations.map { migration in
            let path = (directory as NSString).appendingPathComponent(migration.fileName)
            let data = Data(migration.sql.utf8)
            if let existing = FileManager.default.contents(atPath: path) {
                guard existing == data else {
                    throw ConfigurationError("--write-sql: \(path) exists with other content; not overwritten")
                }
                return path
            }
            guard FileManager.default.createFile(atPath: path, contents: data) else {
                throw ConfigurationError("--write-sql: cannot write \(path)")
            }
            return path
        }
    }

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
