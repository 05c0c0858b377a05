import Reconciler
import Testing

/// `Migration`'s marker and names, `SchemaState`'s rule for a newer schema, and `migrate --status`'s lines: pure.
@Suite struct MigrationStatusTests {
    private static func applied(
        _ version: Int,
        _ name: String,
        checksum: String? = nil,
        compatible: Bool? = nil
    )
        -> SchemaState.Applied
    {
        SchemaState.Applied(
            version: version,
            name: name,
            appliedAt: "2026-11-28 02:30:00Z",
            checksum: checksum,
            rollbackCompatible: compatible
        )
    }

    @Test func theRollbackMarkerIsALineOfItsOwnAndFileNamesArePadded() {
        #expect(Migration(version: 7, name: "x", sql: "-- rollback: compatible\nCREATE TABLE t ();").rollbackCompatible)
        #expect(Migration(version: 7, name: "x", sql: "SELECT 1;\n   -- Rollback: Compatible  \n").rollbackCompatible)
        #expect(!Migration(version: 7, name: "x", sql: "-- rollback: compatible only with 6\n").rollbackCompatible)
        #expect(!Migration(version: 7, name: "x", sql: "CREATE TABLE t (); -- rollback: compatible").rollbackCompatible)
        #expect(Migration(version: 7, name: "write_savings", sql: "").fileName == "007_write_savings.sql")
        #expect(Migration(version: 1024, name: "far", sql: "").fileName == "1024_far.sql")
        // SHA-256 of the empty string.
        #expect(
            Migration(version: 1, name: "e", sql: "").checksum
                == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        )
    }

    @Test func aNewerSchemaIsRefusedUnlessEveryUnknownMigrationIsCompatible() throws {
        let known: Set<Int> = [1, 2]
        let base = [Self.applied(1, "a"), Self.applied(2, "b")]
        #expect(try SchemaState(applied: base).refuseIfNewer(known: known).isEmpty)
        let compatible = SchemaState(applied: base + [Self.applied(3, "c", compatible: true)])
        #expect(try compatible.refuseIfNewer(known: known).map(\.version) == [3])
        for flag in [false, nil] as [Bool?] {
            let refused = SchemaState(
                applied: base + [Self.applied(3, "c", compatible: true), Self.applied(4, "d", compatible: flag)]
            )
            #expect(throws: ConfigurationError.self) { try refused.refuseIfNewer(known: known) }
            do {
                try refused.refuseIfNewer(known: known)
            } catch {
                #expect("\(error)".contains("004_d.sql"))
                #expect(!"\(error)".contains("003_c.sql"))
            }
        }
        #expect(SchemaState(applied: [Self.applied(2, "b")]).missing([1, 2, 3]) == [1, 3])
    }

    @Test func statusListsAppliedPendingChangedAndNewerWithASummary() throws {
        let one = Migration(version: 1, name: "a", sql: "SELECT 1;\n")
        let two = Migration(version: 2, name: "b", sql: "SELECT 2;\n")
        let three = Migration(version: 3, name: "c", sql: "SELECT 3;\n")
        let source = try MigrationSource(migrations: [three, one, two], origin: "built in")
        let state = SchemaState(applied: [
            Self.applied(1, "a", checksum: one.checksum), Self.applied(2, "b", checksum: "edited"),
            Self.applied(9, "z", compatible: false),
        ])
        let lines = MigrationStatus(source: source, state: state).lines
        #expect(lines.count == 5)
        #expect(lines[0] == "applied  001_a.sql  2026-11-28 02:30:00Z")
        #expect(lines[1].hasPrefix("applied  002_b.sql") && lines[1].contains("changed since it was applied"))
        #expect(lines[2] == "pending  003_c.sql")
        #expect(lines[3].hasPrefix("newer    009_z.sql") && lines[3].contains("refuses to run (exit 78)"))
        #expect(lines[4].hasPrefix("2 applied, 1 pending, 1 from a newer build; migrations: built in"))
        #expect(lines[4].hasSuffix("this build cannot run against this database"))
        #expect(throws: ConfigurationError.self) { try MigrationSource(migrations: [one, one], origin: "dir") }
    }
}
