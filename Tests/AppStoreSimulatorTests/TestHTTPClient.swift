import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// A response as the test client saw it.
struct TestResponse: Sendable {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    /// The body as a JSON object, or nil when it is not one.
    var json: [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
    }
}

/// Why a request got no complete response (reset, close, truncation).
struct TestClientError: Error, CustomStringConvertible {
    var description: String
}

/// Collects responses for requests sent in order on one connection. Touched only on its event loop
/// (enqueue runs via `eventLoop.execute`), hence `@unchecked Sendable`.
final class ResponseCollector: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPClientResponsePart
    private var pending: [EventLoopPromise<TestResponse>] = []
    private var current: TestResponse?

    func enqueue(_ promise: EventLoopPromise<TestResponse>) { pending.append(promise) }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let h):
            current = TestResponse(status: Int(h.status.code), headers: h.headers.map { ($0.name, $0.value) }, body: [])
        case .body(let b):
            current?.body += Array(b.readableBytesView)
        case .end:
            if let r = current, !pending.isEmpty { pending.removeFirst().succeed(r) }
            current = nil
        }
    }

    private func failAll(_ error: any Error) {
        let p = pending
        pending = []
        for promise in p { promise.fail(error) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        failAll(TestClientError(description: "error: \(error)"))
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        failAll(TestClientError(description: "connection closed (partial body: \(current?.body.count ?? -1) bytes)"))
        context.fireChannelInactive()
    }
}

/// One keep-alive HTTP/1.1 connection to the simulator over NIO.
struct TestConnection: Sendable {
    let channel: any Channel
    let collector: ResponseCollector

    static let group = MultiThreadedEventLoopGroup.singleton

    static func connect(port: Int) async throws -> TestConnection {
        let collector = ResponseCollector()
        let channel = try await ClientBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(collector)
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        return TestConnection(channel: channel, collector: collector)
    }

    func send(
        _ method: HTTPMethod = .POST,
        _ path: String,
        body: [UInt8]? = nil,
        headers extra: [(String, String)] = []
    ) async throws -> TestResponse {
        let promise = channel.eventLoop.makePromise(of: TestResponse.self)
        let collector = self.collector
        channel.eventLoop.execute { collector.enqueue(promise) }
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: "127.0.0.1")
        if let body {
            headers.add(name: "Content-Type", value: "application/json")
            headers.add(name: "Content-Length", value: String(body.count))
        }
        for (name, value) in extra { headers.add(name: name, value: value) }
        var head = HTTPRequestHead(version: .http1_1, method: method, uri: path)
        head.headers = headers
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        if let body {
            channel.write(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(bytes: body))), promise: nil)
        }
        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
        return try await promise.futureResult.get()
    }

    func close() async {
        try? await channel.close().get()
    }

    /// One request on a fresh connection.
    static func once(
        port: Int,
        _ method: HTTPMethod = .POST,
        _ path: String,
        body: [UInt8]? = nil
    ) async throws
        -> TestResponse
    {
        let c = try await connect(port: port)
        defer { Task { await c.close() } }
        return try await c.send(method, path, body: body)
    }
}

/// Builds a verifyReceipt body the way Apple clients do (slashes escaped as `\/`).
func verifyBody(receipt: String, password: String? = "sim-shared-secret", excludeOld: Bool? = nil) -> [UInt8] {
    var s = "{\"receipt-data\":\"" + receipt.replacingOccurrences(of: "/", with: "\\/") + "\""
    if let password { s += ",\"password\":\"\(password)\"" }
    if let excludeOld { s += ",\"exclude-old-transactions\":\(excludeOld)" }
    return Array((s + "}").utf8)
}
