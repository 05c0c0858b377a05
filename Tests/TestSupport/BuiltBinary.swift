import Foundation

/// Where the package's built executables are, for every test that runs one (`renewal-reconciler`,
/// `appstore-simulator`): `RENEWAL_RECONCILER_BIN_DIR` when set (CI points it at a release build), else the
/// directory the running test bundle was built into (`.build/<triple>/<configuration>`), else
/// `.build/debug` in this checkout.
public enum BuiltBinary {
    /// The package's root directory (this file is `Tests/TestSupport/BuiltBinary.swift`).
    public static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    public static var directory: URL {
        if let dir = ProcessInfo.processInfo.environment["RENEWAL_RECONCILER_BIN_DIR"], !dir.isEmpty {
            return URL(fileURLWithPath: dir)
        }
        var candidates: [URL] = []
        if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            candidates.append(URL(fileURLWithPath: exe).deletingLastPathComponent())
        }
        candidates.append(Bundle.main.bundleURL)
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent())
        for candidate in candidates
        where FileManager.default.isExecutableFile(atPath: candidate.appendingPathComponent("renewal-reconciler").path)
        {
            return candidate
        }
        return packageRoot.appendingPathComponent(".build/debug")
    }

    /// The path of the built executable `name`.
    public static func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    public static var reconciler: String { path("renewal-reconciler") }
    public static var simulator: String { path("appstore-simulator") }
}
