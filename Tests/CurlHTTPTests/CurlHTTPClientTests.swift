import CurlHTTP
import Dispatch
import Foundation
import Synchronization
import TestSupport
import Testing

/// Integration tests: the real client against a real HTTP server on 127.0.0.1 (`LoopbackHTTPServer`
/// answering `CurlTestRoutes`). They run beside the whole suite, on a machine that may be busy (docs/testing.md,
/// "One command"): a timeout the test wants to see is short against a server that never answers in time (so
/// it fires however slow the machine), and every other limit is a safety net far above what a working client
/// needs (`slack`), so a busy machine lengthens a test but cannot fail it.
@Suite struct CurlHTTPClientTests {
    /// The safety net: the total timeout of a transfer that must end otherwise (answered, cancelled), and the most
    /// a test waits for something a working client does within milliseconds.
    static let slack = Duration.seconds(600)

    /// Starts a server and a client, runs `body`, then shuts both down.
    private func withFixture(
        _ configuration: CurlHTTPClient.Configuration = .init(totalTimeout: CurlHTTPClientTests.slack),
        _ body: (LoopbackHTTPServer, CurlHTTPClient) async throws -> Void
    ) async throws {
        let server = try LoopbackHTTPServer(handler: CurlTestRoutes.answer)
        let client = CurlHTTPClient(configuration: configuration)
        defer {
            client.shutdown()
            server.stop()
        }
        try await body(server, client)
    }

    private func failure(_ client: CurlHTTPClient, _ request: HTTPRequest) async -> HTTPClientError? {
        do {
            _ = try await client.execute(request)
            return nil
        } catch {
            return error
        }
    }

    @Test func simpleGetReturnsStatusBodyAndVersion() async throws {
        try await withFixture { server, client in
            let response = try await client.execute(HTTPRequest(url: server.baseURL + "/hello"))
            #expect(response.status == 200)
            #expect(String(decoding: response.body, as: UTF8.self) == "hello")
            #expect(response.httpVersion == .http1_1)
            #expect(response.headers["content-length"] == "5")
        }
    }

    @Test func fiveHundredConcurrentRequestsShareFewConnections() async throws {
        let configuration = CurlHTTPClient.Configuration(
            maxConnections: 16,
            maxHostConnections: 8,
            totalTimeout: Self.slack
        )
        try await withFixture(configuration) { server, client in
            let statuses = try await withThrowingTaskGroup(of: (Int, String).self) { group in
                for _ in 0..<500 {
                    group.addTask {
                        let response = try await client.execute(HTTPRequest(url: server.baseURL + "/hello"))
                        return (response.status, String(decoding: response.body, as: UTF8.self))
                    }
                }
                var collected: [(Int, String)] = []
                for try await result in group {
                    collected.append(result)
                }
                return collected
            }
            #expect(statuses.count == 500)
            #expect(statuses.allSatisfy { $0.0 == 200 && $0.1 == "hello" })
            #expect(server.requests.count == 500)
            #expect(server.connectionsWithRequests >= 1)
            #expect(server.connectionsWithRequests <= 8)
        }
    }

    @Test func sequentialRequestsReuseOneKeptAliveConnection() async throws {
        try await withFixture { server, client in
            for _ in 0..<20 {
                let response = try await client.execute(HTTPRequest(url: server.baseURL + "/hello"))
                #expect(response.status == 200)
            }
            #expect(server.requests.count == 20)
            #expect(server.connectionsWithRequests == 1, "\(server.requests.map(\.connection))")
        }
    }

    @Test func shutdownClosesEveryClientSocket() async throws {
        let server = try LoopbackHTTPServer(handler: CurlTestRoutes.answer)
        let client = CurlHTTPClient(configuration: .init(maxHostConnections: 4, totalTimeout: Self.slack))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<40 {
                group.addTask { _ = try await client.execute(HTTPRequest(url: server.baseURL + "/hello")) }
            }
            try await group.waitForAll()
        }
        #expect(try openClientSockets(toPort: server.port) > 0)  // idle, kept alive in the cache
        client.shutdown()
        // Sockets are closed once their Dispatch sources are cancelled; wait for that (bounded).
        let deadline = ContinuousClock.now + Self.slack
        while try openClientSockets(toPort: server.port) > 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(try openClientSockets(toPort: server.port) == 0)
        server.stop()
    }

    /// Sockets of this process connected to 127.0.0.1:`port` that still hold a descriptor
    /// (TIME_WAIT entries have inode 0 and are not counted).
    private func openClientSockets(toPort port: Int) throws -> Int {
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/self/net/tcp"))
        defer { try? handle.close() }
        let table = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
        #expect(table.contains("local_address"))
        let wanted = String(format: "%04X", port)
        return table.split(separator: "\n").dropFirst().filter { line in
            let fields = line.split(separator: " ")
            guard fields.count > 9 else { return false }
            return fields[2].hasSuffix(":" + wanted) && fields[9] != "0"
        }.count
    }

    @Test func completionAPIDeliversEveryResultOnce() async throws {
        try await withFixture { server, client in
            let count = 50
            let results = Mutex<[Int]>([])
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let group = DispatchGroup()
                for _ in 0..<count {
                    group.enter()
                    client.execute(HTTPRequest(url: server.baseURL + "/hello")) { result in
                        results.withLock { $0.append((try? result.get())?.status ?? -1) }
                        group.leave()
                    }
                }
                group.notify(queue: .global()) { continuation.resume() }
            }
            let statuses = results.withLock { $0 }
            #expect(statuses.count == count)
            #expect(statuses.allSatisfy { $0 == 200 })
        }
    }

    @Test func slowServerHitsTotalTimeout() async throws {
        try await withFixture { server, client in
            let request = HTTPRequest(
                url: server.baseURL + "/hang?ms=5000&token=SECRET-TOKEN",
                totalTimeout: .milliseconds(300)
            )
            let error = try #require(await failure(client, request))
            #expect(error.code == .timeout)
            #expect(error.curlCode == 28)
            #expect(error.description.contains("127.0.0.1:\(server.port)/hang"))
            #expect(error.description.contains("timeout"))
            #expect(!error.description.contains("SECRET-TOKEN"))
            #expect(!error.description.contains("ms=5000"))
        }
    }

    @Test func timeoutOnAReusedConnectionIsStillATimeout() async throws {
        try await withFixture { server, client in
            _ = try await client.execute(HTTPRequest(url: server.baseURL + "/hello"))
            let error = try #require(
                await failure(
                    client,
                    HTTPRequest(url: server.baseURL + "/hang", totalTimeout: .milliseconds(300))
                )
            )
            #expect(error.code == .timeout)
            #expect(server.connectionsWithRequests == 1, "\(server.requests.map(\.connection))")
        }
    }

    @Test func httpsToAPlainHTTPServerIsATLSError() async throws {
        try await withFixture { server, client in
            let error = try #require(await failure(client, HTTPRequest(url: "https://127.0.0.1:\(server.port)/hello")))
            #expect(error.code == .tls)
            #expect(error.description.contains("https://127.0.0.1:\(server.port)/hello"))
        }
    }

    @Test func stalledTLSHandshakeHitsConnectTimeout() async throws {
        let silent = try LoopbackHTTPServer(silent: true, handler: CurlTestRoutes.answer)
        let client = CurlHTTPClient(
            configuration: .init(connectTimeout: .milliseconds(300), totalTimeout: Self.slack)
        )
        let error = await failure(client, HTTPRequest(url: "https://127.0.0.1:\(silent.port)/verifyReceipt"))
        client.shutdown()
        silent.stop()
        let unwrapped = try #require(error)
        #expect(unwrapped.code == .connectTimeout)
        #expect(unwrapped.curlCode == 28)
        #expect(silent.acceptedConnections == 1)
    }

    @Test func closedPortGivesConnectionFailed() async throws {
        // A port on 127.0.0.1 that nothing listens on (bound, then closed).
        let closed = try LoopbackHTTPServer(handler: CurlTestRoutes.answer)
        let port = closed.port
        closed.stop()
        let client = CurlHTTPClient(configuration: .init(connectTimeout: Self.slack, totalTimeout: Self.slack))
        defer { client.shutdown() }
        let error = try #require(await failure(client, HTTPRequest(url: "http://127.0.0.1:\(port)/verifyReceipt")))
        #expect(error.code == .connectionFailed)
        #expect(error.curlCode == 7)
        #expect(error.description.contains("127.0.0.1:\(port)/verifyReceipt"))
    }

    @Test(arguments: ["length", "chunked"])
    func oversizedBodyIsRefused(mode: String) async throws {
        try await withFixture { server, client in
            let request = HTTPRequest(url: server.baseURL + "/big?n=2000000&mode=\(mode)", maxResponseBytes: 1_000_000)
            let error = try #require(await failure(client, request))
            #expect(error.code == .responseTooLarge)
            #expect(error.description.contains("1000000 bytes"))
            if mode == "length" {
                // Refused up front from Content-Length (CURLE_FILESIZE_EXCEEDED), before any body byte.
                #expect(error.curlCode == 63)
            }
        }
    }

    @Test(arguments: ["length", "chunked"])
    func bodyAtTheCapIsAccepted(mode: String) async throws {
        try await withFixture { server, client in
            let request = HTTPRequest(url: server.baseURL + "/big?n=1000000&mode=\(mode)", maxResponseBytes: 1_000_000)
            let response = try await client.execute(request)
            #expect(response.status == 200)
            #expect(response.body.count == 1_000_000)
        }
    }

    @Test func responseHeadersAreReadable() async throws {
        try await withFixture { server, client in
            let response = try await client.execute(HTTPRequest(url: server.baseURL + "/headers"))
            #expect(response.status == 503)
            #expect(response.headers["retry-after"] == "120")
            #expect(response.headers["Retry-After"] == "120")
            #expect(response.headers["SUNSET"] == "Sat, 31 Dec 2033 23:59:59 GMT")
            #expect(response.headers["deprecation"] == "true")
            #expect(response.headers.values(for: "x-multi") == ["a", "b"])
            #expect(response.headers["no-such-header"] == nil)
        }
    }

    @Test func postBodyOfOneMegabyteArrivesIntact() async throws {
        try await withFixture { server, client in
            var generator = SystemRandomNumberGenerator()
            let payload = Data((0..<1_048_576).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let request = HTTPRequest(
                url: server.baseURL + "/echo",
                method: .post,
                headers: [("Content-Type", "application/octet-stream")],
                body: payload
            )
            let response = try await client.execute(request)
            #expect(response.status == 200)
            #expect(response.body.count == payload.count)
            #expect(response.body == payload)
            #expect(response.headers["x-saw-expect"] == "none")
        }
    }

    @Test func emptyPostAndPutWithBodyWork() async throws {
        try await withFixture { server, client in
            let empty = try await client.execute(HTTPRequest(url: server.baseURL + "/echo", method: .post))
            #expect(empty.status == 200)
            #expect(empty.body.isEmpty)
            let put = try await client.execute(
                HTTPRequest(url: server.baseURL + "/echo", method: .put, body: Data("abc".utf8))
            )
            #expect(String(decoding: put.body, as: UTF8.self) == "abc")
        }
    }

    @Test(arguments: ["length", "chunked"])
    func connectionClosedMidBodyIsAnError(mode: String) async throws {
        try await withFixture { server, client in
            let error = try #require(await failure(client, HTTPRequest(url: server.baseURL + "/truncate?mode=\(mode)")))
            #expect(error.code == .connectionReset)
            #expect(error.curlCode == 18 || error.curlCode == 56)
            #expect(error.description.contains("/truncate"))
            // The client stays usable afterwards.
            let response = try await client.execute(HTTPRequest(url: server.baseURL + "/hello"))
            #expect(response.status == 200)
        }
    }

    @Test func shutdownCancelsTransfersInFlight() async throws {
        let server = try LoopbackHTTPServer(handler: CurlTestRoutes.answer)
        // Transfers that must end by the shutdown, never by their timeout, however long the machine takes to get here.
        let client = CurlHTTPClient(configuration: .init(maxHostConnections: 20, totalTimeout: Self.slack))
        let count = 10
        let codes = Mutex<[HTTPClientError.Code?]>([])
        let group = DispatchGroup()
        for _ in 0..<count {
            group.enter()
            client.execute(HTTPRequest(url: server.baseURL + "/hang")) { result in
                codes.withLock {
                    if case .failure(let error) = result { $0.append(error.code) } else { $0.append(nil) }
                }
                group.leave()
            }
        }
        // Wait (bounded) until the server has every request, so they are truly in flight.
        let deadline = ContinuousClock.now + Self.slack
        while server.requests.count < count, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(server.requests.count == count)

        client.shutdown()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            group.notify(queue: .global()) { continuation.resume() }
        }
        let collected = codes.withLock { $0 }
        #expect(collected.count == count)
        #expect(collected.allSatisfy { $0 == .cancelled }, "\(collected)")
        // The half-finished connections are closed too (bounded wait for the Dispatch cancel handlers).
        let closeDeadline = ContinuousClock.now + Self.slack
        while try openClientSockets(toPort: server.port) > 0, ContinuousClock.now < closeDeadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(try openClientSockets(toPort: server.port) == 0)

        // Requests after shutdown fail fast with .cancelled.
        let late = try #require(await failure(client, HTTPRequest(url: server.baseURL + "/hello")))
        #expect(late.code == .cancelled)
        client.shutdown()  // idempotent
        server.stop()
    }

    @Test func cancellingTheTaskCancelsTheTransfer() async throws {
        // The transfer must end by the cancellation, never by its timeout.
        try await withFixture(.init(totalTimeout: Self.slack)) { server, client in
            let request = HTTPRequest(url: server.baseURL + "/hang")
            let task = Task { () -> HTTPClientError? in
                do throws(HTTPClientError) {
                    _ = try await client.execute(request)
                    return nil
                } catch {
                    return error
                }
            }
            let deadline = ContinuousClock.now + Self.slack
            while server.requests.count < 1, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            task.cancel()
            let error = try #require(await task.value)
            #expect(error.code == .cancelled)
        }
    }

    @Test func invalidRequestsFailWithoutNetwork() async throws {
        let client = CurlHTTPClient()
        defer { client.shutdown() }
        let ftp = try #require(await failure(client, HTTPRequest(url: "ftp://example.com/file")))
        #expect(ftp.code == .invalidURL)
        let garbage = try #require(await failure(client, HTTPRequest(url: "not a url?password=hunter2")))
        #expect(garbage.code == .invalidURL)
        #expect(!garbage.description.contains("hunter2"))
        let injected = try #require(
            await failure(client, HTTPRequest(url: "http://127.0.0.1:9/", headers: [("X-Evil", "a\r\nHost: other")]))
        )
        #expect(injected.code == .invalidRequest)
        let badMethod = try #require(
            await failure(client, HTTPRequest(url: "http://127.0.0.1:9/", method: HTTPMethod(rawValue: "GET /x")))
        )
        #expect(badMethod.code == .invalidRequest)
    }
}
