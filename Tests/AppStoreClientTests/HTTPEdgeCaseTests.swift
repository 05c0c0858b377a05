import AppStoreClient
import Foundation
import ReceiptDomain
import TestSupport
import Testing

/// HTTP-level answers the simulator does not produce, from a scripted loopback server: headers worth
/// logging, Retry-After as a date, wrong endpoints, oversized bodies, nobody listening.
@Suite struct HTTPEdgeCaseTests {
    /// Sends one request to a server that always answers `response`.
    private func exchange(
        _ response: LoopbackHTTPServer.Response,
        maxResponseBytes: Int = 32 << 20
    ) async throws -> VerifyAttemptResult {
        let server = try LoopbackHTTPServer { _ in response }
        defer { server.stop() }
        let (client, http) = SimulatorHarness.makeClient(
            production: server.baseURL + "/verifyReceipt",
            sandbox: server.baseURL + "/sandbox/verifyReceipt",
            maxResponseBytes: maxResponseBytes
        )
        defer { http.shutdown() }
        let result = await SimulatorHarness.send(client, "receipt", to: .production)
        #expect(server.requests.count == 1)
        return result
    }

    @Test func sunsetAndDeprecationHeadersAreSurfaced() async throws {
        var response = LoopbackHTTPServer.Response.json(#"{"status":21003}"#)
        response.headers += [("Sunset", "Sat, 01 Jan 2028 00:00:00 GMT"), ("deprecation", "true")]
        let result = try await exchange(response)
        #expect(result.sunset == "Sat, 01 Jan 2028 00:00:00 GMT")
        #expect(result.deprecation == "true")
        #expect(result.verdict == .reject(VerdictReason(.receiptNotAuthenticated, appleStatus: 21003)))
    }

    @Test func retryAfterAsAnHTTPDateSetsEarliest() async throws {
        let result = try await exchange(
            .init(status: 503, headers: [("Retry-After", "Wed, 21 Oct 2037 07:28:00 GMT")], body: Array("busy".utf8))
        )
        guard case .retry(let reason, let earliest) = result.verdict else {
            Issue.record("expected retry, got \(result.verdict)")
            return
        }
        #expect(reason.code == .httpServerError)
        #expect(earliest == Date(timeIntervalSince1970: 2_139_722_880))
    }

    @Test func wrongEndpointIsAConfigurationErrorAnd413RejectsTheReceipt() async throws {
        let notFound = try await exchange(.init(status: 404, headers: [], body: Array("not found".utf8)))
        #expect(notFound.verdict == .configError(VerdictReason(.httpClientError, httpStatus: 404)))
        let tooLarge = try await exchange(.init(status: 413, headers: [], body: []))
        #expect(tooLarge.verdict == .reject(VerdictReason(.httpPayloadTooLarge, httpStatus: 413)))
    }

    @Test func status21006IsOk() async throws {
        let result = try await exchange(.json(#"{"status":21006,"environment":"Production"}"#))
        guard case .ok(let response) = result.verdict else {
            Issue.record("expected ok, got \(result.verdict)")
            return
        }
        #expect(response.status == 21006)
    }

    @Test func oversizedResponseIsRejectedNotRetried() async throws {
        let body = #"{"status":0,"padding":""# + String(repeating: "x", count: 200_000) + #""}"#
        let result = try await exchange(.json(body), maxResponseBytes: 64 * 1024)
        #expect(result.transportFailure == .responseTooLarge)
        #expect(result.verdict == .reject(VerdictReason(.responseTooLarge)))
    }

    @Test func nobodyListeningRetriesAsConnectionFailure() async throws {
        let gone = try LoopbackHTTPServer { _ in .json("{}") }
        let url = gone.baseURL + "/verifyReceipt"
        gone.stop()
        let (client, http) = SimulatorHarness.makeClient(production: url, sandbox: url)
        defer { http.shutdown() }
        let result = await SimulatorHarness.send(client, "receipt", to: .production)
        #expect(result.httpStatus == nil)
        #expect(result.transportFailure == .connectionFailed)
        guard case .retry(let reason, nil) = result.verdict else {
            Issue.record("expected retry, got \(result.verdict)")
            return
        }
        #expect(reason.code == .transport)
    }
}
