/// `migrate --status`: each migration of the source as applied or pending, each migration the database has from
/// a newer build, and whether this build may run against it. Read only.
public struct MigrationStatus: Sendable {
    public enum Entry: Sendable, Equatable {
        /// `changed`: the text applied (its recorded checksum) differs from this source's.
        case applied(Migration, SchemaState.Applied, changed: Bool)
        case pending(Migration)
        /// Applied by a build that knew more migrations than this one.
        case newer(SchemaState.Applied)
    }

    public let origin: String
    /// Sorted by version.
    public let entries: [Entry]

    public init(source: MigrationSource, state: SchemaState) {
        origin = source.origin
        let applied = Dictionary(state.applied.map { ($0.version, $0) }, uniquingKeysWith: { first, _ in first })
        var entries: [(Int, Entry)] = source.migrations.map { migration in
            guard let row = applied[migration.version] else { return (migration.version, .pending(migration)) }
            let changed = row.checksum.map { $0 != migration.checksum } ?? false
            return (migration.version, .applied(migration, row, changed: changed))
        }
        entries += state.unknown(known: Set(source.migrations.map(\.version))).map { ($0.version, .newer($0)) }
        self.entries = entries.sorted { $0.0 < $1.0 }.map(\.1)
    }

    public var pendingCount: Int { entries.filter { if case .pending = $0 { true } else { false } }.count }

    /// One line per entry, then a summary line.
    public var lines: [String] {
        var newer = 0
        var refusing = false
        var lines: [String] = entries.map { entry in
            switch entry {
            case .applied(let migration, let row, let changed):
                let note = changed ? "  (changed since it was applied: this build's text differs)" : ""
                return "applied  \(migration.fileName)  \(row.appliedAt)\(note)"
            case .pending(let migration):
                return "pending  \(migration.fileName)"
            case .newer(let row):
                newer += 1
                let compatible = row.rollbackCompatible == true
                refusing = refusing || !compatible
                let verdict =
                    compatible
                    ? "rollback-compatible: this build still runs"
                    : "not rollback-compatible: this build refuses to run (exit 78)"
                return "newer    \(row.fileName)  \(row.appliedAt)  applied by a newer build; \(verdict)"
            }
        }
        let applied = entries.count - pendingCount - newer
        var summary = "\(applied) applied, \(pendingCount) pending"
        if newer > 0 { summary += ", \(newer) from a newer build" }
        summary += "; migrations: \(origin)"
        if pendingCount > 0 { summary += "; run `renewal-reconciler migrate` to apply the pending ones" }
        if refusing { summary += "; this build cannot run against this database" }
        lines.append(summary)
        return lines
    }
}
