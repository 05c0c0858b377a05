import ArgumentParser
import Foundation
import Reconciler

/// `renewal-reconciler version`: which release runs and which schema it needs, for an operator or a deploy script.
struct VersionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "version",
        abstract: "Print the version, the commit it was built from, and the newest migration built in.",
        discussion: """
            The binary carries every migration of its release (`migrate` needs no sql/ folder); it runs against a \
            database whose schema has all of them, and against a newer schema only when every migration it does \
            not know is marked rollback-compatible (else exit 78). `migrate --status` compares a database with it.
            """
    )

    @Flag(help: "One JSON object: version, commit, modified, schema, newest_migration, migrations.")
    var json = false

    func run() throws {
        let newest = BuildInfo.migrations.last
        if json {
            let object: [String: Any] = [
                "version": Release.version,
                "commit": BuildInfo.commit,
                "modified": BuildInfo.modified,
                "schema": newest?.version ?? 0,
                "newest_migration": newest?.fileName ?? "",
                "migrations": BuildInfo.migrations.count,
            ]
            let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
            print(String(decoding: data, as: UTF8.self))
            return
        }
        print("renewal-reconciler \(Release.version)")
        print("commit \(Release.commitDescription)")
        print(
            "schema \(newest?.version ?? 0): newest migration \(newest?.fileName ?? "none") "
                + "(\(BuildInfo.migrations.count) built in)"
        )
    }
}
