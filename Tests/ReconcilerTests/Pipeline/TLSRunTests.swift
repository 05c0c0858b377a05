import Foundation
import Postgres
import Reconciler
import SignedDataTestSupport
import TestSupport
import Testing

/// HTTPS to Apple end to end (docs/operations.md, "HTTPS to Apple"): `renewal-reconciler` against an HTTPS
/// front for the simulator (`TLSTestServer` relaying to it) whose certificate a test CA signed. Without
/// `--ca-file` the run stops at once with exit 78 naming the host and the reason, every item pending; with
/// it, `run --resume` finishes the same run; `APPLE_CA_FILE` does the same; a missing CA file stops before any
/// request; a server offering only TLS 1.1 is refused even where the system's OpenSSL would allow it.
@Suite struct TLSRunTests {
    static let files: TLSTestPKI.Files = {
        let directory = NSTemporaryDirectory() + "rr-tls-\(UUID().uuidString)"
        // Key generation and PEM writing into a fresh temporary directory do not fail in practice.
        return try! TLSTestPKI().write(to: directory)
    }()

    /// The verifyReceipt URLs through `front`, and no CA file from the test's own environment.
    static func https(_ front: TLSTestServer) -> [String: String] {
        [
            "APPLE_VERIFY_URL": "https://localhost:\(front.port)/verifyReceipt",
            "APPLE_SANDBOX_VERIFY_URL": "https://localhost:\(front.port)/sandbox/verifyReceipt",
            "APPLE_CA_FILE": "",
        ]
    }

    @Test func aRunIsRefusedWithoutTheCAFileAndResumedWithIt() async throws {
        let world = try await EndToEndFixture(subscriptions: 60)
        let simulator = try await world.startSimulator()
        let front = try await TLSTestServer.start(
            certificate: Self.files.serverCertificate,
            key: Self.files.serverKey,
            relay: "127.0.0.1:\(simulator.port)"
        )
        defer { front.stop() }
        let conn = try world.connect()
        defer { conn.close() }
        func count(_ sql: String) throws -> Int { try conn.queryFirst(sql)?.decode("n", as: Int.self) ?? -1 }

        // The system's trust store does not know the test CA: refused at once, exit 78, host and reason named.
        let refused = try await world.run(
            ["--rate", "2000", "--concurrency", "8"],
            extraEnvironment: Self.https(front)
        )
        #expect(refused.status == 78, "\(refused)")
        #expect(
            refused.stderr.contains("TLS refused by localhost:\(front.port)"),
            Comment(rawValue: String(refused.stderr.suffix(3000)))
        )
        #expect(refused.stderr.contains("not trusted"), Comment(rawValue: String(refused.stderr.suffix(3000))))
        #expect(refused.stderr.contains("--ca-file"))
        #expect(!refused.stderr.contains(world.secret))
        #expect(try count("SELECT count(*) AS n FROM reconciliation_runs WHERE status = 'failed'") == 1)
        #expect(try count("SELECT count(*) AS n FROM reconciliation_items WHERE status = 'pending'") == 60)
        #expect(try count("SELECT count(*) AS n FROM subscription_checks WHERE last_verified_at IS NOT NULL") == 0)
        #expect(try count("SELECT count(*) AS n FROM reconciliation_runs WHERE error LIKE '%TLS refused by%'") == 1)

        // The same server trusted through --ca-file: the same run finishes, as the truth says.
        let resumed = await world.runReconciler(
            [
                "run", "--resume", "--report-dir", world.reportDirectory, "--rate", "2000", "--ca-file",
                Self.files.caCertificate,
            ],
            extraEnvironment: Self.https(front)
        )
        #expect(resumed.status == 0, "\(resumed)")
        #expect(try count("SELECT count(*) AS n FROM reconciliation_runs") == 1)
        #expect(try count("SELECT count(*) AS n FROM reconciliation_items WHERE status <> 'done'") == 0)
        let report = try world.compareWithTruth()
        #expect(report.matched == report.compared, "\(report.mismatches.prefix(5))")

        // APPLE_CA_FILE does the same for backfill.
        var environment = Self.https(front)
        environment["APPLE_CA_FILE"] = Self.files.caCertificate
        let backfill = await world.runReconciler(
            ["backfill", "--all", "--now", world.now, "--report-dir", world.reportDirectory, "--rate", "2000"],
            extraEnvironment: environment
        )
        #expect(backfill.status == 0, "\(backfill)")
    }

    @Test func aMissingOrUnusableCAFileStopsBeforeAnyRequest() async throws {
        let world = try await EndToEndFixture(subscriptions: 5)
        let simulator = try await world.startSimulator()
        let front = try await TLSTestServer.start(
            certificate: Self.files.serverCertificate,
            key: Self.files.serverKey,
            relay: "127.0.0.1:\(simulator.port)"
        )
        defer { front.stop() }
        let missing = await world.runReconciler(
            ["run", "--now", world.now, "--ca-file", "/nonexistent/apple-ca.pem"],
            extraEnvironment: Self.https(front)
        )
        #expect(missing.status == 78, "\(missing)")
        #expect(missing.stderr.contains("--ca-file: /nonexistent/apple-ca.pem does not exist"), "\(missing)")

        var environment = Self.https(front)
        environment["APPLE_CA_FILE"] = Self.files.serverKey
        let notPEM = await world.runReconciler(
            ["backfill", "--all", "--now", world.now],
            extraEnvironment: environment
        )
        #expect(notPEM.status == 78, "\(notPEM)")
        #expect(notPEM.stderr.contains("APPLE_CA_FILE: \(Self.files.serverKey) holds no PEM certificate"), "\(notPEM)")
        #expect(!notPEM.stderr.contains("PRIVATE KEY"))

        // Nothing reached the server, and no run was recorded.
        #expect(!front.log.contains("handshake"), "\(front.log)")
        let conn = try world.connect()
        defer { conn.close() }
        #expect(try conn.queryFirst("SELECT count(*) AS n FROM reconciliation_runs")?.decode("n", as: Int.self) == 0)
    }

    /// With an OpenSSL configuration that allows TLS 1.0 at security level 0 (so that libcurl's own defaults
    /// would connect, as `curl` shows), the reconciler still refuses a TLS 1.1 server: the minimum is ours.
    @Test func aServerOfferingOnlyTLS11IsRefusedByOurMinimum() async throws {
        let world = try await EndToEndFixture(subscriptions: 5)
        let simulator = try await world.startSimulator()
        let front = try await TLSTestServer.start(
            certificate: Self.files.serverCertificate,
            key: Self.files.serverKey,
            maxTLS: "1.1",
            relay: "127.0.0.1:\(simulator.port)"
        )
        defer { front.stop() }
        let permissive = world.directory.appendingPathComponent("openssl-tls1.cnf").path
        try """
        openssl_conf = openssl_init
        [openssl_init]
        ssl_conf = ssl_sect
        [ssl_sect]
        system_default = system_default_sect
        [system_default_sect]
        MinProtocol = TLSv1
        CipherString = DEFAULT:@SECLEVEL=0

        """.write(toFile: permissive, atomically: true, encoding: .utf8)

        // The witness: curl (the same libcurl and OpenSSL) with that configuration speaks TLS 1.1 to it.
        let curl = try await ChildProcess.run(
            "/usr/bin/env",
            [
                "curl", "-sS", "--cacert", Self.files.caCertificate, "-o", "/dev/null", "-w", "%{http_code}",
                "-X", "POST", "-d", "{}", "https://localhost:\(front.port)/verifyReceipt",
            ],
            environment: ["OPENSSL_CONF": permissive, "PATH": ProcessInfo.processInfo.environment["PATH"] ?? ""]
        )
        let answered = curl.stdout
        #expect(curl.status == 0 && answered == "200", "curl with TLS 1.0+ allowed: \(answered)")

        var environment = Self.https(front)
        environment["OPENSSL_CONF"] = permissive
        let refused = await world.runReconciler(
            ["run", "--now", world.now, "--report-dir", world.reportDirectory, "--ca-file", Self.files.caCertificate],
            extraEnvironment: environment
        )
        #expect(refused.status == 78, "\(refused)")
        #expect(refused.stderr.contains("TLS refused by localhost:\(front.port)"), "\(refused)")
        #expect(refused.stderr.contains("no TLS version in common"), "\(refused)")
    }
}
