import Foundation

/// One app's object in `--apps FILE` while it is read (`AppsFile.parse`): its fields, read with errors that name
/// the file, the app and the field.
struct AppsFileEntry {
    let object: [String: Any]
    /// The file and the app's index, then its bundle id once known.
    var place: String
    let environment: [String: String]

    func fail(_ field: String, _ problem: String) -> ConfigurationError {
        ConfigurationError("--apps: \(place): \(field): \(problem)")
    }

    /// A string field: nil when absent, an error when not a non-empty string.
    func text(_ field: String) throws -> String? {
        guard let value = object[field] else { return nil }
        guard let string = value as? String, !string.isEmpty else {
            throw fail(field, "must be a non-empty string")
        }
        return string
    }

    /// A verifyReceipt app's shared secret and endpoints.
    func verifyReceipt(bundleId: String) throws -> AppleConfiguration {
        let secret = try AppsFile.secret(object, environment: environment, place: place)
        return try AppleConfiguration.load(
            environment: ["APPLE_SHARED_SECRET": secret.value],
            productionURL: try text("verify_url"),
            sandboxURL: try text("sandbox_verify_url"),
            bundleId: bundleId
        )
    }

    /// A Server API app's key, ids, endpoints, roots and budgets (capped again by the run's `--rate`, and named
    /// after the app when the run has several apps: `ReconciliationRunner.makeRouter`).
    func serverAPI(bundleId: String, rate: Double?) throws -> ServerAPISettings {
        let appAppleId = try self.appAppleId()
        guard let keyId = try text("key_id") else { throw fail("key_id", "missing") }
        guard let issuerId = try text("issuer_id") else { throw fail("issuer_id", "missing") }
        return try ServerAPISettings.load(
            environment: [:],
            privateKeyFile: try keyFile(),
            keyId: keyId,
            issuerId: issuerId,
            bundleId: bundleId,
            appAppleId: appAppleId,
            productionURL: try text("server_api_url"),
            sandboxURL: try text("server_api_sandbox_url"),
            rootFiles: try rootFiles(),
            rootsOnly: try rootsOnly(),
            budgets: rate.map { ServerAPIBudgets().capped(at: $0) } ?? ServerAPIBudgets()
        )
    }

    /// `app_apple_id`: a positive integer, as a number or a string of digits.
    private func appAppleId() throws -> String {
        guard let value = object["app_apple_id"] else { throw fail("app_apple_id", "missing") }
        if let number = value as? NSNumber, number.int64Value > 0, Double(number.int64Value) == number.doubleValue {
            return String(number.int64Value)
        }
        if let string = value as? String, let number = Int64(string), number > 0 { return String(number) }
        throw fail("app_apple_id", "must be a positive number")
    }

    /// The private key's file: `private_key_file`, or a systemd credential's (`private_key_credential`).
    private func keyFile() throws -> String {
        if let file = try text("private_key_file") { return file }
        guard let name = try text("private_key_credential") else {
            throw fail("private_key_file", "missing (or private_key_credential)")
        }
        return try AppsFile.credentialPath(
            name,
            field: "private_key_credential",
            environment: environment,
            place: place
        )
    }

    private func rootFiles() throws -> [String] {
        guard let value = object["root_files"] else { return [] }
        guard let list = value as? [String], !list.isEmpty, list.allSatisfy({ !$0.isEmpty }) else {
            throw fail("root_files", "must be a non-empty array of file paths")
        }
        return list
    }

    private func rootsOnly() throws -> Bool {
        guard let value = object["roots_only"] else { return false }
        guard let flag = value as? Bool else { throw fail("roots_only", "must be true or false") }
        return flag
    }
}
