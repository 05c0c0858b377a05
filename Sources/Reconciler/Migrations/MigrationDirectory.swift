import Foundation

/// One migration file: `NNN_name.sql` in the migrations directory.
public struct MigrationFile: Sendable, Equatable {
    public let version: Int
    public let name: String
    public let path: String
    public var fileName: String { (path as NSString).lastPathComponent }
}

/// Lists and reads the migration files of a directory (`sql/NNN_name.sql`): `--sql-dir`, and the tests.
public struct MigrationDirectory: Sendable {
    public let path: String

    public init(path: String) { self.path = path }

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

    /// The files' migrations, sorted by version.
    /// - Throws: `ConfigurationError` as `files()` does, or for a file that cannot be read as UTF-8.
    public func migrations() throws -> [Migration] {
        try files().map { file in
            guard let data = FileManager.default.contents(atPath: file.path),
                let sql = String(data: data, encoding: .utf8)
            else { throw ConfigurationError("cannot read migration \(file.path) as UTF-8 text") }
            return Migration(version: file.version, name: file.name, sql: sql)
        }
    }
}
