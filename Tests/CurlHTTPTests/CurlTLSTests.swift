import CurlHTTP
import Foundation
import SignedDataTestSupport
import TestSupport
import Testing

/// TLS for real: a Python `ssl` HTTPS server on loopback (`TLSTestServer`) with certificates made at test
/// time (`TLSTestPKI`). A self-signed or unknown-CA certificate, a certificate for another host and a
/// server offering only TLS 1.0/1.1 are refused with an error naming the host and the reason; the same
/// server is accepted once its CA is the client's CA file (docs/testing.md, "TLS").
@Suite struct CurlTLSTests {
    /// One PKI for the suite, written to a temporary directory.
    static let files: TLSTestPKI.Files = {
        let directory = NSTemporaryDirectory() + "curl-tls-\(UUID().uuidString)"
        // Key generation and PEM writing into a fresh temporary directory do not fail in practice.
        return try! TLSTestPKI().write(to: directory)
    }()

    private func withServer(
        certificate: String = Self.files.serverCertificate,
        key: String = Self.files.serverKey,
        maxTLS: String? = nil,
        caFile: String? = nil,
        _ body: (TLSTestServer, CurlHTTPClient) async throws -> Void
    ) async throws {
        let server = try await TLSTestServer.start(certificate: certificate, key: key, maxTLS: maxTLS)
        let client = CurlHTTPClient(
            configuration: .init(
                connectTimeout: CurlHTTPClientTests.slack,
                totalTimeout: CurlHTTPClientTests.slack,
                caFile: caFile
            )
        )
        defer {
            client.shutdown()
            server.stop()
        }
        try await body(server, client)
    }

    private func failure(_ client: CurlHTTPClient, _ url: String) async -> HTTPClientError? {
        do {
            _ = try await client.execute(HTTPRequest(url: url))
            return nil
        } catch {
            return error
        }
    }

    @Test func selfSignedCertificateIsRefusedNamingTheHostAndTheReason() async throws {
        try await withServer(certificate: Self.files.selfSignedCertificate, key: Self.files.selfSignedKey) {
            server,
            client in
            let error = try #require(await failure(client, "https://localhost:\(server.port)/hello"))
            #expect(error.code == .tls)
            #expect(error.tlsFailure == .untrustedCertificate)
            #expect(error.curlCode == 60)
            #expect(error.host == "localhost:\(server.port)")
            #expect(error.description.contains("https://localhost:\(server.port)/hello"), "\(error)")
            #expect(error.description.contains("not trusted"), "\(error)")
            #expect(error.description.contains("self-signed") || error.description.contains("self signed"), "\(error)")
        }
    }

    @Test func certificateOfAnUnknownCAIsRefused() async throws {
        // The system's trust store does not hold the test CA.
        try await withServer { server, client in
            let error = try #require(await failure(client, "https://localhost:\(server.port)/hello"))
            #expect(error.tlsFailure == .untrustedCertificate, "\(error)")
            #expect(error.description.contains("localhost:\(server.port)"))
            #expect(error.description.contains("not trusted"), "\(error)")
        }
    }

    @Test func theSameServerIsAcceptedWithItsCAAsTheCAFile() async throws {
        try await withServer(caFile: Self.files.caCertificate) { server, client in
            let response = try await client.execute(HTTPRequest(url: "https://localhost:\(server.port)/hello"))
            #expect(response.status == 200)
            #expect(String(decoding: response.body, as: UTF8.self).hasPrefix("hello over TLSv1."))
            // The certificate also names 127.0.0.1; a POST with a body makes the whole round trip.
            let posted = try await client.execute(
                HTTPRequest(url: "https://127.0.0.1:\(server.port)/verifyReceipt", method: .post, body: Data("{}".utf8))
            )
            #expect(posted.status == 200)
        }
    }

    @Test func theCAFileReplacesTheSystemStoreAndTrustsNothingElse() async throws {
        // A self-signed server stays refused when the CA file names another CA.
        try await withServer(
            certificate: Self.files.selfSignedCertificate,
            key: Self.files.selfSignedKey,
            caFile: Self.files.caCertificate
        ) { server, client in
            let error = try #require(await failure(client, "https://localhost:\(server.port)/hello"))
            #expect(error.tlsFailure == .untrustedCertificate, "\(error)")
        }
    }

    @Test func hostnameMismatchIsRefused() async throws {
        // Signed by the trusted CA, but for elsewhere.invalid.
        try await withServer(
            certificate: Self.files.otherHostCertificate,
            key: Self.files.otherHostKey,
            caFile: Self.files.caCertificate
        ) { server, client in
            let error = try #require(await failure(client, "https://localhost:\(server.port)/hello"))
            #expect(error.code == .tls)
            #expect(error.tlsFailure == .hostnameMismatch, "\(error)")
            #expect(error.description.contains("localhost:\(server.port)"))
            #expect(error.description.contains("does not name this host"), "\(error)")
        }
    }

    @Test func serverOfferingOnlyTLS11IsRefused() async throws {
        try await withServer(maxTLS: "1.1", caFile: Self.files.caCertificate) { server, client in
            // The server really speaks TLS 1.1 (Python's own client at security level 0 gets it)...
            #expect(await server.probe(tls: "1.1") == "TLSv1.1")
            // ...and the client, which requires TLS 1.2, refuses it.
            let error = try #require(await failure(client, "https://localhost:\(server.port)/hello"))
            #expect(error.code == .tls)
            #expect(error.tlsFailure == .protocolVersion, "\(error)")
            #expect(error.description.contains("localhost:\(server.port)"))
            #expect(error.description.contains("TLS 1.2"), "\(error)")
            // The server logs the refusal after the client has seen it: wait for the line (a few seconds at most).
            let deadline = ContinuousClock.now + CurlHTTPClientTests.slack
            while !server.log.contains("handshake refused"), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(server.log.contains("handshake refused"), "\(server.log)")
        }
    }

    @Test func serverOfferingTLS12IsAccepted() async throws {
        try await withServer(maxTLS: "1.2", caFile: Self.files.caCertificate) { server, client in
            let response = try await client.execute(HTTPRequest(url: "https://localhost:\(server.port)/hello"))
            #expect(String(decoding: response.body, as: UTF8.self) == "hello over TLSv1.2\n")
        }
    }

    @Test func missingCAFileIsATLSRefusalNamingIt() async throws {
        try await withServer(caFile: "/nonexistent/ca.pem") { server, client in
            let error = try #require(await failure(client, "https://localhost:\(server.port)/hello"))
            #expect(error.tlsFailure == .caFile, "\(error)")
            #expect(error.tlsFailure?.isRefusal == true)
        }
    }
}
