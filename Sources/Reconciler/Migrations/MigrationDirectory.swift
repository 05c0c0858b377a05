import Foundation

/// One migration file: `NNN_name.sql` in the migrations directory.
public struct MigrationFile: Sendable, Equatable {
    public let version: Int
    public let name: String
    public let path: String
    public var fileName: String { (path as NSString).lastPathComponent }
}

/// Finds and lists the migration files (`sql/NNN_name.sql`).
public struct MigrationDirectory: Sendable {
    public let path: String

    public init(path: String) { self.path = path }

    /// The directory to use: `explicit` (from `--sql-dir`), `$RENEWAL_RECONCILER_SQL_DIR`, `./sql`, the
    /// `sql/` folder of the source tree the binary was built in, `/usr/share/renewal-reconciler/sql`.
    /// - Throws: `ConfigurationError` listing every place it looked.
    public static func locate(
        explicit: String?,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> MigrationDirectory {
        if let explicit {
            guard isDirectory(explicit) else { throw ConfigurationError("--sql-dir: \(explicit) is not a directory") }
            return MigrationDirectory(path: explicit)
        }
        if let env = nonEmpty(environment["RENEWAL_RECONCILER_SQL_DIR"]) {
            guard isDirectory(env) else {
                throw ConfigurationError("RENEWAL_RECONCILER_SQL_DIR: \(env) is not a directory")
            }
            return MigrationDirectory(path: env)
        }
        var candidates = [FileManager.default.currentDirectoryPath + "/sql"]
        // .build/<triple>/<config>/renewal-reconciler -> the package root is three levels up.
        let exe = URL(fileURLWithPath: CommandLine.arguments.first ?? "").resolvingSymlinksInPath()
        candidates.append(
            exe.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("sql").path
        )
        candidates.append("/usr/share/renewal-reconciler/sql")
        for candidate in candidates where isDirectory(candidate) {
            let dir = MigrationDirectory(path: candidate)
            if let files = try? dir.files(), !files.isEmpty { return dir }
        }
        throw ConfigurationError(
            "no migrations directory found (looked in \(candidates.joined(separator: ", "))): "
                + "pass --sql-dir or set RENEWAL_RECONCILER_SQL_DIR"
        )
    }

    /// The migration files, sorted by version.
    /// - Throws: `ConfigurationError` for a file that does not follow `NNN_name.sql` or a duplicated version.
    public func files() throws -> [MigrationFile] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: path)
        } catch {
            throw ConfigurationError("cannot list migrations directory \(path): \(error.localizedDescription)")
        }
        var result: [MigrationFile] = []
        for name in names where name.hasSuffix(".sql") {
            let stem = name.dropLast(4)
            guard let underscore = stem.firstIndex(of: "_"), let version = Int(stem[..<underscore]), version > 0
            else {
                throw ConfigurationError("\(path)/\(name): migration files must be named NNN_name.sql")
            }
            result.append(
                MigrationFile(
                    version: version,
                    name: String(stem[stem.index(after: underscore)...]),
                    path: path + "/" + name
                )
            )
        }
        result.sort { $0.version < $1.version }
        for (a, b) in zip(result, result.dropFirst()) where a.version == b.version {
            throw ConfigurationError("\(path): two migrations with version \(a.version): \(a.fileName), \(b.fileName)")
        }
        return result
    }
}

private func isDirectory(_ path: String) -> Bool {
    var isDir: ObjCBool = false
    return FileManager.default.fileExists(atPath: path, isDirectory: &isDir) && isDir.boolValue
}
