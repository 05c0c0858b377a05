import Foundation
import Reconciler
import TestSupport
import Testing

/// Secrets: the verifyReceipt endpoints must be https (certificate and host verified) for every
/// host but loopback, with no switch to turn that off; the shared secret and database passwords are never
/// accepted on the command line (process arguments are visible to every user in `ps`).
@Suite struct BadInputConfigurationTests {
    static let packageRoot = EndToEndFixture.packageRoot
    static var reconcilerBinary: String { BuiltBinary.reconciler }

    /// What a finished `renewal-reconciler` process left behind.
    struct Outcome {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs the built `renewal-reconciler` with exactly `environment` (plus PATH) and waits for it.
    static func runReconciler(_ arguments: [String], environment: [String: String]) async throws -> Outcome {
        try #require(FileManager.default.isExecutableFile(atPath: reconcilerBinary), "build first: \(reconcilerBinary)")
        var env = environment
        env["PATH"] = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        // Output goes to temporary files (read after exit): no pipe can fill up and block the child.
        let outcome = try await ChildProcess.run(reconcilerBinary, arguments, environment: env)
        return Outcome(status: outcome.status, stdout: outcome.stdout, stderr: outcome.stderr)
    }

    // MARK: AppleConfiguration.validateEndpoint

    @Test(arguments: [
        "http://buy.itunes.apple.com/verifyReceipt",
        "HTTP://SANDBOX.ITUNES.APPLE.COM/verifyReceipt",
        "http://10.0.0.5:8080/verifyReceipt",
        "http://127.0.0.1.evil.example/verifyReceipt",  // a name that starts like loopback
        "http://127.0.0.1@evil.example/verifyReceipt",  // userinfo trick: the host is evil.example
        "http://2130706433/verifyReceipt",  // 127.0.0.1 as one number: not accepted as loopback
        "http://[::2]/verifyReceipt",
        "ftp://buy.itunes.apple.com/verifyReceipt",
        "file:///etc/passwd",
        "buy.itunes.apple.com/verifyReceipt",
        "",
    ])
    func plainHTTPToANonLoopbackHostOrAnotherSchemeIsAConfigurationError(url: String) {
        #expect(throws: ConfigurationError.self) {
            try AppleConfiguration.validateEndpoint(url, setting: "APPLE_VERIFY_URL")
        }
    }

    @Test(arguments: [
        "https://buy.itunes.apple.com/verifyReceipt",
        "https://sandbox.itunes.apple.com/verifyReceipt",
        "HTTPS://proxy.internal.example:8443/verifyReceipt",
        "http://127.0.0.1:8080/verifyReceipt",
        "http://127.1.2.3/verifyReceipt",
        "http://localhost:9000/verifyReceipt",
        "http://[::1]:9000/verifyReceipt",
    ])
    func httpsAnywhereAndHTTPToLoopbackAreAccepted(url: String) throws {
        try AppleConfiguration.validateEndpoint(url, setting: "APPLE_VERIFY_URL")
    }

    @Test func theErrorNamesTheSettingAndTheHost() {
        do {
            try AppleConfiguration.validateEndpoint("http://apple.example/verifyReceipt", setting: "--verify-url")
            Issue.record("http:// to a remote host was accepted")
        } catch {
            let text = String(describing: error)
            #expect(text.contains("--verify-url"))
            #expect(text.contains("apple.example"))
            #expect(text.contains("https://"))
        }
    }

    @Test func loadRejectsAnInsecureEnvironmentURLWithoutEchoingTheSecret() {
        let secret = "secret-\(UUID().uuidString)"
        for (variable, url) in [
            ("APPLE_VERIFY_URL", "http://buy.itunes.apple.com/verifyReceipt"),
            ("APPLE_SANDBOX_VERIFY_URL", "http://sandbox.itunes.apple.com/verifyReceipt"),
        ] {
            let environment = [
                "APPLE_SHARED_SECRET": secret, "APPLE_BUNDLE_ID": "com.example.renewals", variable: url,
            ]
            do {
                _ = try AppleConfiguration.load(environment: environment)
                Issue.record("\(variable)=\(url) was accepted")
            } catch {
                #expect(error is ConfigurationError)
                #expect(String(describing: error).contains(variable))
                #expect(!String(describing: error).contains(secret))
            }
        }
        // The same environment with https loads, and the defaults are https.
        let good = try? AppleConfiguration.load(environment: ["APPLE_SHARED_SECRET": secret])
        #expect(good?.productionURL.hasPrefix("https://") == true)
        #expect(good?.sandboxURL.hasPrefix("https://") == true)
    }

    // MARK: --database-url

    @Test(arguments: [
        "postgresql://reconciler:hunter2@db.internal/app",
        "postgres://reconciler:hunter2@db.internal:5432/app?sslmode=require",
        "postgresql://reconciler@db.internal/app?password=hunter2",
        "host=db.internal user=reconciler password=hunter2 dbname=app",
        "password=hunter2",
    ])
    func aConnectionStringWithAPasswordIsDetected(url: String) {
        #expect(DatabaseURL.containsPassword(url))
    }

    @Test(arguments: [
        "postgresql://reconciler@db.internal/app",
        "postgresql:///app?host=/var/run/postgresql",
        "host=db.internal user=reconciler dbname=app",
    ])
    func aConnectionStringWithoutAPasswordIsAccepted(url: String) {
        #expect(!DatabaseURL.containsPassword(url))
    }

    // MARK: The CLI

    @Test func theCLIExits78ForPlainHTTPToARemoteHost() async throws {
        let secret = "secret-\(UUID().uuidString)"
        let base = [
            "DATABASE_URL": "postgresql://nobody@127.0.0.1:1/none", "APPLE_SHARED_SECRET": secret,
            "APPLE_BUNDLE_ID": "com.example.renewals",
        ]
        var env = base
        env["APPLE_VERIFY_URL"] = "http://buy.itunes.apple.com/verifyReceipt"
        let fromEnvironment = try await Self.runReconciler(["run", "--now", "2026-11-21T03:00:00Z"], environment: env)
        #expect(fromEnvironment.status == 78)
        #expect(fromEnvironment.stderr.contains("APPLE_VERIFY_URL"))
        #expect(!fromEnvironment.stderr.contains(secret))

        let fromFlag = try await Self.runReconciler(
            ["backfill", "--all", "--sandbox-verify-url", "http://sandbox.itunes.apple.com/verifyReceipt"],
            environment: base
        )
        #expect(fromFlag.status == 78)
        #expect(fromFlag.stderr.contains("--sandbox-verify-url"))
        #expect(!fromFlag.stderr.contains(secret))
    }

    @Test func theCLIRefusesAPasswordInDatabaseURL() async throws {
        for command in [["migrate"], ["import", "--file", "/dev/null"], ["run"]] {
            let outcome = try await Self.runReconciler(
                command + ["--database-url", "postgresql://reconciler:hunter2-pw@127.0.0.1:1/app"],
                environment: ["APPLE_SHARED_SECRET": "s", "APPLE_BUNDLE_ID": "com.example.renewals"]
            )
            #expect(outcome.status == 78, "\(command)")
            #expect(outcome.stderr.contains("--database-url must not contain a password"), "\(command)")
            #expect(!outcome.stderr.contains("hunter2-pw"), "\(command)")
        }
    }

    @Test func noFlagTakesTheSecretAndNoFlagTurnsOffVerification() async throws {
        // No command offers an option for the secret itself (only a file naming where it is), nor a way
        // to skip TLS verification or allow insecure endpoints.
        for command in ["run", "backfill", "explain", "import", "migrate", "report", "runs", "demo"] {
            let help = try await Self.runReconciler([command, "--help"], environment: [:])
            #expect(help.status == 0, "\(command) --help")
            let options = help.stdout.split(whereSeparator: \.isWhitespace).filter { $0.hasPrefix("--") }
                .map { String($0.prefix { $0 != "," && $0 != "=" && $0 != "<" }) }
            for option in options {
                let lower = option.lowercased()
                if lower.contains("secret") { #expect(option == "--shared-secret-file", "\(command): \(option)") }
                #expect(
                    !lower.contains("insecure") && !lower.contains("no-verify") && !lower.contains("skip-verif")
                        && !lower.contains("allow-http") && !lower.contains("tls"),
                    "\(command): \(option)"
                )
                #expect(!lower.contains("password"), "\(command): \(option)")
            }
        }
        // And a secret passed as a flag is a usage error (exit 64), not silently accepted.
        for flag in ["--shared-secret", "--password", "--apple-shared-secret"] {
            let attempt = try await Self.runReconciler(
                ["backfill", "--all", flag, "abc123"],
                environment: ["DATABASE_URL": "postgresql://nobody@127.0.0.1:1/x"]
            )
            #expect(attempt.status == 64, "\(flag)")
        }
    }

    @Test func curlVerifiesPeerAndHostWithNoWayToTurnItOff() throws {
        // A static guard over the HTTP layer: verification is set on every transfer and nothing sets it
        // to 0 (there is no configuration knob that could).
        let dir = Self.packageRoot.appendingPathComponent("Sources/CurlHTTP")
        var sources = ""
        for name in try FileManager.default.contentsOfDirectory(atPath: dir.path) where name.hasSuffix(".swift") {
            sources += try String(contentsOf: dir.appendingPathComponent(name), encoding: .utf8) + "\n"
        }
        #expect(sources.contains("CURLOPT_SSL_VERIFYPEER, 1"))
        #expect(sources.contains("CURLOPT_SSL_VERIFYHOST, 2"))
        for forbidden in [
            "CURLOPT_SSL_VERIFYPEER, 0", "CURLOPT_SSL_VERIFYHOST, 0", "CURLOPT_SSL_VERIFYHOST, 1",
            "CURLOPT_PROXY_SSL_VERIFYPEER, 0", "CURLOPT_SSL_VERIFYSTATUS, 0", "CURLOPT_SSL_VERIFYPEER, verify",
        ] {
            #expect(!sources.contains(forbidden), "\(forbidden)")
        }
    }
}
