import Reconciler

/// This release: its version (the Debian package's, docs/packaging.md), the commit it was built from and the
/// migrations built into it (`BuildInfo`, generated before every build).
enum Release {
    /// Raised with every release; a schema change raises at least the minor number.
    static let version = "1.0.0"

    /// `1.0.0 (commit 0123456789ab, schema 24)`: `renewal-reconciler --version`.
    static var versionLine: String {
        "\(version) (commit \(commitDescription), schema \(BuildInfo.migrations.last?.version ?? 0))"
    }

    /// The commit, with "+modified" when the build's tree had changes to tracked files.
    static var commitDescription: String { BuildInfo.commit + (BuildInfo.modified ? "+modified" : "") }
}
