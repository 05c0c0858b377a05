import Foundation
import Reconciler
import Testing

/// `--apps FILE` (docs/operations.md, "Several apps"): what a valid file gives, and every mistake named by file,
/// app and field, with no secret in any message.
@Suite struct AppsFileTests {
    final class Folder {
        let url: URL
        init() throws {
            url = FileManager.default.temporaryDirectory.appendingPathComponent("apps-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        }
        deinit { try? FileManager.default.removeItem(at: url) }
        func write(_ name: String, _ text: String) throws -> String {
            let path = url.appendingPathComponent(name).path
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            return path
        }
    }

    @Test func aVerifyReceiptAppWithASecretFileAndItsRate() throws {
        let folder = try Folder()
        let secret = try folder.write("news.secret", "news-shared-secret-value\n")
        let path = try folder.write(
            "apps.json",
            """
            {"apps": [{"bundle_id": "com.example.news", "source": "verify-receipt", "rate": 25,
                       "shared_secret_file": "\(secret)", "verify_url": "http://127.0.0.1:9/verifyReceipt"}]}
            """
        )
        let apps = try AppsFile.load(path: path, environment: [:])
        #expect(apps.count == 1)
        #expect(apps[0].bundleId == "com.example.news")
        #expect(apps[0].source == .verifyReceipt)
        #expect(apps[0].rate == 25)
        #expect(apps[0].apple?.sharedSecret.value == "news-shared-secret-value")
        #expect(apps[0].apple?.productionURL == "http://127.0.0.1:9/verifyReceipt")
        #expect(apps[0].apple?.sandboxURL == AppleConfiguration.defaultSandboxURL)
    }

    @Test func secretsFromAnEnvironmentVariableOrASystemdCredential() throws {
        let folder = try Folder()
        _ = try folder.write("pro-secret", "from-credential")
        let path = try folder.write(
            "apps.json",
            """
            {"apps": [
              {"bundle_id": "a.one", "source": "verify-receipt", "shared_secret_env": "ONE_SECRET"},
              {"bundle_id": "a.two", "source": "verify-receipt", "shared_secret_credential": "pro-secret"}]}
            """
        )
        let apps = try AppsFile.load(
            path: path,
            environment: ["ONE_SECRET": "from-environment", "CREDENTIALS_DIRECTORY": folder.url.path]
        )
        #expect(apps.map(\.bundleId) == ["a.one", "a.two"])
        #expect(apps.map { $0.apple?.sharedSecret.value } == ["from-environment", "from-credential"])
    }

    @Test(arguments: [
        ("{\"apps\": []}", "\"apps\" is empty"),
        ("[1, 2]", "expected an object with an \"apps\" array"),
        ("{\"apps\": [", "is not JSON"),
        ("{\"apps\": [{\"source\": \"verify-receipt\"}]}", "apps[0]: bundle_id: missing"),
        (
            "{\"apps\": [{\"bundle_id\": \"a.b\", \"source\": \"receipts\", \"shared_secret_env\": \"S\"}]}",
            "apps[0] (a.b): source: must be verify-receipt or server-api, not receipts"
        ),
        (
            "{\"apps\": [{\"bundle_id\": \"a.b\", \"source\": \"verify-receipt\", \"shared_secret_env\": \"S\", \"rate\": -1}]}",
            "apps[0] (a.b): rate: must be from 0.1 to 1000000 requests per second, got -1"
        ),
        (
            "{\"apps\": [{\"bundle_id\": \"a.b\", \"source\": \"verify-receipt\", \"shared_secret_env\": \"S\", \"key_id\": \"K\"}]}",
            "apps[0] (a.b): key_id: not a field of a verify-receipt app"
        ),
        (
            "{\"apps\": [{\"bundle_id\": \"a.b\", \"source\": \"verify-receipt\"}]}",
            "apps[0] (a.b): shared_secret_file: give exactly one of"
        ),
        (
            "{\"apps\": [{\"bundle_id\": \"a.b\", \"source\": \"verify-receipt\", \"shared_secret_env\": \"UNSET\"}]}",
            "apps[0] (a.b): shared_secret_env: UNSET is not set or empty"
        ),
        (
            "{\"apps\": [{\"bundle_id\": \"a.b\", \"source\": \"verify-receipt\", \"shared_secret_env\": \"S\"},"
                + " {\"bundle_id\": \"a.b\", \"source\": \"verify-receipt\", \"shared_secret_env\": \"S\"}]}",
            "apps[1] (a.b): bundle_id is listed twice: apps[0] (a.b) is the same app"
        ),
        (
            "{\"apps\": [{\"bundle_id\": \"a.b\", \"source\": \"verify-receipt\", \"shared_secret_env\": \"S\","
                + " \"verify_url\": \"http://apple.example/verifyReceipt\"}]}",
            "apps[0] (a.b): verify_url: plain http:// is allowed only to a loopback host"
        ),
        (
            "{\"apps\": [{\"bundle_id\": \"a.c\", \"source\": \"server-api\", \"key_id\": \"K\", \"issuer_id\": \"I\","
                + " \"private_key_file\": \"/nonexistent/key.p8\"}]}",
            "apps[0] (a.c): app_apple_id: missing"
        ),
        (
            "{\"apps\": [{\"bundle_id\": \"a.c\", \"source\": \"server-api\", \"app_apple_id\": 12, \"issuer_id\": \"I\","
                + " \"private_key_file\": \"/nonexistent/key.p8\"}]}",
            "apps[0] (a.c): key_id: missing"
        ),
        (
            "{\"apps\": [{\"bundle_id\": \"a.c\", \"source\": \"server-api\", \"app_apple_id\": 12, \"key_id\": \"K\","
                + " \"issuer_id\": \"I\", \"private_key_credential\": \"../key\"}]}",
            "apps[0] (a.c): private_key_credential: ../key is not a credential name"
        ),
    ])
    func mistakesAreNamedByFileAppAndField(json: String, expected: String) throws {
        let folder = try Folder()
        let path = try folder.write("apps.json", json)
        do {
            _ = try AppsFile.load(path: path, environment: ["S": "a-secret-that-must-not-show"])
            Issue.record("accepted: \(json)")
        } catch let error as ConfigurationError {
            #expect(error.message.hasPrefix("--apps: "), "\(error.message)")
            #expect(error.message.contains(path) || !json.contains("bundle_id"), "\(error.message)")
            #expect(error.message.contains(expected), "\(error.message)")
            #expect(!error.message.contains("a-secret-that-must-not-show"))
        }
    }

    @Test func aMissingFileIsNamed() {
        #expect(throws: ConfigurationError.self) { try AppsFile.load(path: "/nonexistent/apps.json") }
        do {
            _ = try AppsFile.load(path: "/nonexistent/apps.json")
        } catch {
            #expect("\(error)" == "--apps: cannot read /nonexistent/apps.json")
        }
    }
}
