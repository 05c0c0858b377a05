import Crypto
import Foundation

/// One schema migration: `sql/NNN_name.sql`, built into the binary or read from `--sql-dir`
/// (docs/operations.md, "Schema and migrations").
public struct Migration: Sendable, Equatable {
    /// The marker line that says binaries built before this migration may keep running once it is applied.
    public static let rollbackCompatibleMarker = "-- rollback: compatible"

    public let version: Int
    public let name: String
    /// The file's text, byte for byte.
    public let sql: String

    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }

    /// `NNN_name.sql`, as in `sql/`.
    public var fileName: String {
        let digits = String(version)
        return String(repeating: "0", count: max(0, 3 - digits.count)) + digits + "_" + name + ".sql"
    }

    /// SHA-256 of the text, in hex: recorded in `schema_migrations.checksum` when applied, so `migrate --status`
    /// can tell a migration whose file changed after it was applied.
    public var checksum: String {
        SHA256.hash(data: Data(sql.utf8)).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    /// True when the file has the line `-- rollback: compatible`: its change is additive (new tables, new nullable
    /// columns, new indexes), so a binary that does not know it still runs correctly against the schema. Recorded
    /// in `schema_migrations.rollback_compatible`; absent means a rollback past it is refused (exit 78).
    public var rollbackCompatible: Bool {
        sql.split(separator: "\n", omittingEmptySubsequences: true).contains {
            $0.trimmingCharacters(in: .whitespaces).lowercased() == Self.rollbackCompatibleMarker
        }
    }
}
