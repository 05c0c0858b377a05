import Foundation

/// Reads `--apps FILE` (docs/operations.md, "Several apps"): a JSON object with an `apps` array, one object per
/// app. Secrets are never in the file itself: each is named by a file path, a systemd credential name (looked
/// up in `$CREDENTIALS_DIRECTORY`) or an environment variable's name. Every error names the file, the app
/// (index and bundle id) and the field.
///
///     {"apps": [
///       {"bundle_id": "com.example.news", "source": "verify-receipt", "rate": 50,
///        "shared_secret_file": "/etc/renewal-reconciler/news.secret"},
///       {"bundle_id": "com.example.pro", "source": "server-api", "rate": 50, "app_apple_id": 1234567890,
///        "key_id": "ABC123DEFG", "issuer_id": "57246542-96fe-1a63-e053-0824d011072a",
///        "private_key_credential": "pro-private-key"}
///     ]}
public enum AppsFile {
    static let commonFields: Set<String> = ["bundle_id", "source", "rate"]
    static let verifyReceiptFields: Set<String> = [
        "shared_secret_file", "shared_secret_credential", "shared_secret_env", "verify_url", "sandbox_verify_url",
    ]
    static let serverAPIFields: Set<String> = [
        "app_apple_id", "key_id", "issuer_id", "private_key_file", "private_key_credential", "server_api_url",
        "server_api_sandbox_url", "root_files", "roots_only",
    ]

    /// The apps of `path`, in file order. `environment` supplies `$CREDENTIALS_DIRECTORY` and the variables
    /// `shared_secret_env` names.
    /// - Throws: `ConfigurationError` naming the file, the app and the field.
    public static func load(
        path: String,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> [AppDefinition] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError("--apps: cannot read \(path)")
        }
        let json: Any
        do {
            json = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw ConfigurationError("--apps: \(path) is not JSON (\(String(describing: error).prefix(200)))")
        }
        guard let root = json as? [String: Any], let list = root["apps"] as? [Any] else {
            throw ConfigurationError("--apps: \(path): expected an object with an \"apps\" array")
        }
        guard !list.isEmpty else { throw ConfigurationError("--apps: \(path): \"apps\" is empty") }
        var apps: [AppDefinition] = []
        // Bundle ids compared ignoring case (BundleIdRule): key -> the index of the app that has it.
        var seen: [String: Int] = [:]
        for (index, entry) in list.enumerated() {
            guard let object = entry as? [String: Any] else {
                throw ConfigurationError("--apps: \(path): apps[\(index)] is not an object")
            }
            let app = try parse(object, where: "\(path): apps[\(index)]", environment: environment)
            if let first = seen[BundleIdRule.key(app.bundleId)] {
                throw ConfigurationError(
                    "--apps: \(path): apps[\(index)] (\(app.bundleId)): bundle_id is listed twice: apps[\(first)] "
                        + "(\(apps[first].bundleId)) is the same app (bundle ids are compared ignoring case)"
                )
            }
            seen[BundleIdRule.key(app.bundleId)] = index
            apps.append(app)
        }
        return apps
    }

    static func parse(
        _ object: [String: Any],
        where place: String,
        environment: [String: String]
    ) throws -> AppDefinition {
        var entry = AppsFileEntry(object: object, place: place, environment: environment)
        guard let bundleId = try entry.text("bundle_id") else { throw entry.fail("bundle_id", "missing") }
        // Where an error is: the app's index, and its bundle id once known.
        entry.place += " (\(bundleId))"
        guard let sourceText = try entry.text("source") else { throw entry.fail("source", "missing") }
        guard let source = AppleSourceKind(rawValue: sourceText), source != .auto else {
            throw entry.fail("source", "must be verify-receipt or server-api, not \(sourceText.prefix(40))")
        }
        let allowed = commonFields.union(source == .verifyReceipt ? verifyReceiptFields : serverAPIFields)
        if let unknown = object.keys.filter({ !allowed.contains($0) }).sorted().first {
            throw entry.fail(
                unknown,
                "not a field of a \(sourceText) app (fields: \(allowed.sorted().joined(separator: ", ")))"
            )
        }
        let rate = try object["rate"].map { value in try Self.rate(value, orFail: { entry.fail("rate", $0) }) }
        do {
            let credentials: AppCredentials =
                source == .verifyReceipt
                ? .verifyReceipt(try entry.verifyReceipt(bundleId: bundleId))
                : .serverAPI(try entry.serverAPI(bundleId: bundleId, rate: rate))
            return AppDefinition(bundleId: bundleId, credentials: credentials, rate: rate)
        } catch let error as ConfigurationError where !error.message.hasPrefix("--apps:") {
            throw ConfigurationError("--apps: \(entry.place): \(relabelled(error.message, object))")
        }
    }

    /// An app's `rate`: a number within the bound of `--rate` (`SettingBounds.rate`; docs/operations.md, "Bounds
    /// of every numeric setting"); else the error `fail` makes of the problem.
    static func rate(_ value: Any, orFail fail: (String) -> ConfigurationError) throws -> Double {
        let bound = SettingBounds.rate
        guard let number = value as? NSNumber, !(value is Bool) else {
            throw fail("must be a number \(bound.rangeText)")
        }
        guard bound.contains(number.doubleValue) else {
            throw fail("must be \(bound.rangeText), got \(NumericBound.numberText(number.doubleValue))")
        }
        return number.doubleValue
    }

    /// An error of the one-app settings' loaders, named by the apps file's field instead of the one-app flag it
    /// stands for (`--private-key-file: cannot read ...` -> `private_key_file: cannot read ...`).
    static func relabelled(_ message: String, _ object: [String: Any]) -> String {
        let keyField = object["private_key_credential"] != nil ? "private_key_credential" : "private_key_file"
        let fields: [(flag: String, field: String)] = [
            ("--verify-url", "verify_url"), ("--sandbox-verify-url", "sandbox_verify_url"),
            ("--private-key-file", keyField), ("--key-id", "key_id"), ("--issuer-id", "issuer_id"),
            ("--app-apple-id", "app_apple_id"), ("--server-api-url", "server_api_url"),
            ("--server-api-sandbox-url", "server_api_sandbox_url"), ("--root-ca", "root_files"),
        ]
        for (flag, field) in fields where message.hasPrefix(flag + ":") || message.hasPrefix(flag + " ") {
            return field + message.dropFirst(flag.count)
        }
        return message
    }

    /// The shared secret of a verifyReceipt app: read from a file (`shared_secret_file`, or a systemd credential's
    /// file) or the value of the environment variable `shared_secret_env` names. A file's error names the field.
    static func secret(
        _ object: [String: Any],
        environment: [String: String],
        place: String
    ) throws -> Secret {
        let named = ["shared_secret_file", "shared_secret_credential", "shared_secret_env"].filter { object[$0] != nil }
        guard named.count == 1, let field = named.first, let value = object[field] as? String, !value.isEmpty else {
            throw ConfigurationError(
                "--apps: \(place): shared_secret_file: give exactly one of shared_secret_file, "
                    + "shared_secret_credential or shared_secret_env (a non-empty string)"
            )
        }
        switch field {
        case "shared_secret_file":
            return try AppleConfiguration.readSecretFile(value, setting: field)
        case "shared_secret_credential":
            let path = try credentialPath(value, field: field, environment: environment, place: place)
            return try AppleConfiguration.readSecretFile(path, setting: field)
        default:
            guard let secret = environment[value], !secret.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
            else {
                throw ConfigurationError("--apps: \(place): shared_secret_env: \(value) is not set or empty")
            }
            return Secret(secret.trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }

    static func credentialPath(
        _ name: String,
        field: String,
        environment: [String: String],
        place: String
    ) throws
        -> String
    {
        guard !name.contains("/"), name != ".", name != ".." else {
            throw ConfigurationError("--apps: \(place): \(field): \(name.prefix(60)) is not a credential name")
        }
        guard let directory = environment["CREDENTIALS_DIRECTORY"], !directory.isEmpty else {
            throw ConfigurationError(
                "--apps: \(place): \(field): $CREDENTIALS_DIRECTORY is not set (systemd LoadCredential= sets it)"
            )
        }
        return (directory as NSString).appendingPathComponent(name)
    }
}
