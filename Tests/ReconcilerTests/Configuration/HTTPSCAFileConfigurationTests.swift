import Foundation
import Reconciler
import Testing

/// `--ca-file` / `APPLE_CA_FILE` (docs/operations.md, "HTTPS to Apple"): the flag wins, absent means the
/// system's trust store, and a missing, unreadable or non-PEM file is a configuration error naming the
/// setting and the path, never the file's content.
@Suite struct HTTPSCAFileConfigurationTests {
    static let pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"

    func withDirectory(_ body: (String) throws -> Void) throws {
        let directory = NSTemporaryDirectory() + "rr-cafile-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try body(directory)
    }

    func message(_ body: () throws -> String?) -> String {
        do {
            let value = try body()
            return "accepted: \(value ?? "nil")"
        } catch let error as ConfigurationError {
            return error.message
        } catch {
            return "other error: \(error)"
        }
    }

    @Test func absentMeansTheSystemStoreAndTheFlagWinsOverTheEnvironment() throws {
        try withDirectory { directory in
            let flagFile = directory + "/flag.pem"
            let envFile = directory + "/env.pem"
            try Self.pem.write(toFile: flagFile, atomically: true, encoding: .utf8)
            try Self.pem.write(toFile: envFile, atomically: true, encoding: .utf8)
            #expect(try HTTPSCAFileConfiguration.load(flag: nil, environment: [:]) == nil)
            #expect(try HTTPSCAFileConfiguration.load(flag: nil, environment: ["APPLE_CA_FILE": ""]) == nil)
            #expect(try HTTPSCAFileConfiguration.load(flag: nil, environment: ["APPLE_CA_FILE": envFile]) == envFile)
            #expect(
                try HTTPSCAFileConfiguration.load(flag: flagFile, environment: ["APPLE_CA_FILE": envFile]) == flagFile
            )
        }
    }

    @Test func aRelativePathIsNamedAbsolute() {
        // Resolved against the working directory (not changed here: tests run in parallel).
        let name = "no-such-ca-\(UUID().uuidString).pem"
        let text = message { try HTTPSCAFileConfiguration.load(flag: name, environment: [:]) }
        #expect(
            text
                == "--ca-file: \(FileManager.default.currentDirectoryPath)/\(name) does not exist (a PEM file of CA certificates)"
        )
    }

    @Test func unusableFilesAreConfigurationErrorsNamingTheSettingAndThePath() throws {
        try withDirectory { directory in
            let key = directory + "/server.key"
            try "-----BEGIN PRIVATE KEY-----\nSECRETBYTES\n-----END PRIVATE KEY-----\n".write(
                toFile: key,
                atomically: true,
                encoding: .utf8
            )
            let missing = message { try HTTPSCAFileConfiguration.load(flag: directory + "/none.pem", environment: [:]) }
            #expect(missing == "--ca-file: \(directory)/none.pem does not exist (a PEM file of CA certificates)")
            let folder = message {
                try HTTPSCAFileConfiguration.load(flag: nil, environment: ["APPLE_CA_FILE": directory])
            }
            #expect(folder.hasPrefix("APPLE_CA_FILE: \(directory) is a directory"))
            let notPEM = message { try HTTPSCAFileConfiguration.load(flag: key, environment: [:]) }
            #expect(notPEM.hasPrefix("--ca-file: \(key) holds no PEM certificate"))
            #expect(!notPEM.contains("SECRETBYTES"))
            let empty = message { try HTTPSCAFileConfiguration.load(flag: "", environment: [:]) }
            #expect(empty.hasPrefix("--ca-file is empty"))
        }
    }
}
