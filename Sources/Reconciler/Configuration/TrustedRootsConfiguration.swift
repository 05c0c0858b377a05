import AppStoreSignedData
import Foundation

/// Which roots signed App Store data may chain to: Apple Root CA - G3 (compiled in), plus the files named
/// by `--root-ca` (repeatable) and `APPLE_ROOT_CA_FILE` (one path, or several separated by `:`), PEM or DER.
/// `--root-ca-only` (or `APPLE_ROOT_CA_ONLY=1`) trusts the given files alone, without Apple's root: for
/// tests and the simulator. See docs/signed-data.md.
public enum TrustedRootsConfiguration {
    /// - Throws: `ConfigurationError` (exit 78) naming the setting and the file, never its bytes.
    public static func load(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        flagFiles: [String] = [],
        only flagOnly: Bool = false
    ) throws -> TrustedRoots {
        var sources: [(path: String, setting: String)] = flagFiles.map { ($0, "--root-ca") }
        if let list = nonEmpty(environment["APPLE_ROOT_CA_FILE"]) {
            sources += list.split(separator: ":").map { (String($0), "APPLE_ROOT_CA_FILE") }
        }
        let only = flagOnly || ["1", "true", "yes"].contains(environment["APPLE_ROOT_CA_ONLY"]?.lowercased() ?? "")
        if only && sources.isEmpty {
            throw ConfigurationError(
                "--root-ca-only (APPLE_ROOT_CA_ONLY) without a root file: nothing would be trusted; "
                    + "name one with --root-ca or APPLE_ROOT_CA_FILE"
            )
        }
        var roots = only ? TrustedRoots([]) : TrustedRoots.apple
        for (path, setting) in sources {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ConfigurationError("\(setting): cannot read \(path)")
            }
            do {
                roots = try roots.adding(pemOrDER: [UInt8](data))
            } catch {
                throw ConfigurationError("\(setting): \(path): \(error.message)")
            }
        }
        return roots
    }
}
