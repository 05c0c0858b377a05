import Foundation
import Reconciler
import Testing

/// The apps file's own mistakes found by the review (docs/operations.md, "Several apps"): a rate outside its
/// bound, bundle ids that differ only in case, and the labels of the secret's errors.
@Suite struct AppsFileBoundsTests {
    static func write(_ json: String) throws -> (path: String, folder: URL) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("apps-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("apps.json").path
        try Data(json.utf8).write(to: URL(fileURLWithPath: path))
        return (path, folder)
    }

    /// The message of the error `AppsFile.load` throws for `json` (nil when it loads).
    static func error(_ json: String, environment: [String: String] = ["S": "a-secret"]) throws -> String? {
        let (path, folder) = try write(json)
        defer { try? FileManager.default.removeItem(at: folder) }
        do {
            _ = try AppsFile.load(path: path, environment: environment)
            return nil
        } catch let error as ConfigurationError {
            return error.message.replacingOccurrences(of: path, with: "FILE")
        }
    }

    static func app(_ bundleId: String, _ extra: String = "") -> String {
        "{\"bundle_id\": \"\(bundleId)\", \"source\": \"verify-receipt\", \"shared_secret_env\": \"S\"\(extra)}"
    }

    @Test(arguments: ["1e-7", "0", "1e19", "1e308", "\"50\""])
    func aRateOutsideItsBoundNamesTheFileTheAppTheFieldAndTheRange(rate: String) throws {
        let message = try #require(try Self.error("{\"apps\": [\(Self.app("a.b", ", \"rate\": \(rate)"))]}"))
        #expect(message.hasPrefix("--apps: FILE: apps[0] (a.b): rate: must be "), "\(message)")
        #expect(message.contains("from 0.1 to 1000000 requests per second"), "\(message)")
    }

    @Test func theBoundsOfARateAreAccepted() throws {
        #expect(try Self.error("{\"apps\": [\(Self.app("a.b", ", \"rate\": 0.1"))]}") == nil)
        #expect(try Self.error("{\"apps\": [\(Self.app("a.b", ", \"rate\": 1000000"))]}") == nil)
    }

    @Test func bundleIdsThatDifferOnlyInCaseAreOneAppListedTwice() throws {
        let message = try #require(
            try Self.error("{\"apps\": [\(Self.app("com.example.News")), \(Self.app("com.Example.news"))]}")
        )
        #expect(message.contains("apps[1] (com.Example.news)"), "\(message)")
        #expect(message.contains("apps[0] (com.example.News)"), "\(message)")
        #expect(message.contains("ignoring case"), "\(message)")
    }

    @Test func anUnreadableSharedSecretFileIsNamedByItsFieldNotTheEnvironmentVariable() throws {
        let message = try #require(
            try Self.error(
                "{\"apps\": [{\"bundle_id\": \"a.b\", \"source\": \"verify-receipt\","
                    + " \"shared_secret_file\": \"/nonexistent/news.secret\"}]}"
            )
        )
        #expect(message == "--apps: FILE: apps[0] (a.b): shared_secret_file: cannot read /nonexistent/news.secret")
        #expect(!message.contains("APPLE_SHARED_SECRET"))
    }

    @Test func anEmptySharedSecretCredentialIsNamedByItsField() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("creds-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data("\n".utf8).write(to: folder.appendingPathComponent("news"))
        let message = try #require(
            try Self.error(
                "{\"apps\": [{\"bundle_id\": \"a.b\", \"source\": \"verify-receipt\", \"shared_secret_credential\": \"news\"}]}",
                environment: ["CREDENTIALS_DIRECTORY": folder.path]
            )
        )
        #expect(message.hasPrefix("--apps: FILE: apps[0] (a.b): shared_secret_credential: "), "\(message)")
        #expect(message.hasSuffix(" is empty"), "\(message)")
        #expect(!message.contains("APPLE_SHARED_SECRET"))
    }

    @Test func aVerifyURLMistakeIsNamedByTheFilesField() throws {
        let message = try #require(
            try Self.error(
                "{\"apps\": [\(Self.app("a.b", ", \"verify_url\": \"http://apple.example/verifyReceipt\""))]}"
            )
        )
        #expect(message.hasPrefix("--apps: FILE: apps[0] (a.b): verify_url: plain http://"), "\(message)")
        #expect(!message.contains("--verify-url"), "\(message)")
    }
}
