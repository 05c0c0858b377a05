import Foundation

/// The trust store for HTTPS connections to Apple (verifyReceipt, the App Store Server API): `--ca-file`
/// (on `run` and `backfill`) or `APPLE_CA_FILE`, a PEM file of CA certificates that replaces the system's
/// for those connections (docs/operations.md, "HTTPS to Apple"). Absent: the system's trust store.
/// Not to be confused with `--root-ca` / `APPLE_ROOT_CA_FILE`, the roots of Apple's *signed data*
/// (`TrustedRootsConfiguration`).
public enum HTTPSCAFileConfiguration {
    /// The PEM marker a usable CA file holds (libcurl with OpenSSL reads PEM only).
    static let pemMarker = "-----BEGIN CERTIFICATE-----"

    /// The CA file to use (an absolute path), or nil for the system's trust store. Checked before any
    /// request: it must be a readable regular file holding at least one PEM certificate.
    /// - Throws: `ConfigurationError` (exit 78) naming the setting and the path, never the file's bytes.
    public static func load(
        flag: String?,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> String? {
        let setting: String
        let path: String
        if let flag {
            (setting, path) = ("--ca-file", flag)
        } else if let value = environment["APPLE_CA_FILE"], !value.isEmpty {
            (setting, path) = ("APPLE_CA_FILE", value)
        } else {
            return nil
        }
        guard !path.isEmpty else { throw ConfigurationError("\(setting) is empty: name a PEM file of CA certificates") }
        let absolute =
            path.hasPrefix("/")
            ? path : URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(path).path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: absolute, isDirectory: &isDirectory) else {
            throw ConfigurationError("\(setting): \(absolute) does not exist (a PEM file of CA certificates)")
        }
        guard !isDirectory.boolValue else {
            throw ConfigurationError("\(setting): \(absolute) is a directory, not a PEM file of CA certificates")
        }
        guard let data = FileManager.default.contents(atPath: absolute) else {
            throw ConfigurationError("\(setting): cannot read \(absolute) (permissions?)")
        }
        guard data.range(of: Data(pemMarker.utf8)) != nil else {
            throw ConfigurationError(
                "\(setting): \(absolute) holds no PEM certificate (\(pemMarker)); a DER file converts with "
                    + "`openssl x509 -inform der -in FILE -out FILE.pem`"
            )
        }
        return absolute
    }
}
