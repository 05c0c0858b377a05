import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A real HTTP/1.1 server on 127.0.0.1 (random port) for the client tests. It counts accepted
/// TCP connections and received requests, and serves a few routes that misbehave on purpose:
///
/// - `GET /hello` → 200 "hello"
/// - `POST /echo` → 200 with the request body; `X-Saw-Expect` tells whether an Expect header came
/// - `GET /slow?ms=N` → 200 after N milliseconds
/// - `GET /big?n=N&mode=length|chunked` → N bytes, with Content-Length or chunked
/// - `GET /headers` → 503 with Retry-After, Sunset, Deprecation and a repeated X-Multi
/// - `GET /truncate?mode=length|chunked` → part of a body, then the connection is closed
/// - `GET /hang` → never answers
final class TestHTTPServer: Sendable {
    let port: Int
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    private let stats: Stats

    final class Stats: Sendable {
        let connections = Atomic<Int>(0)
        let requests = Atomic<Int>(0)
    }

    var acceptedConnections: Int { stats.connections.load(ordering: .relaxed) }
    var receivedRequests: Int { stats.requests.load(ordering: .relaxed) }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    private init(group: MultiThreadedEventLoopGroup, channel: any Channel, stats: Stats, port: Int) {
        self.group = group
        self.channel = channel
        self.stats = stats
        self.port = port
    }

    /// - Parameter silent: accept connections but never answer (no HTTP handler at all), e.g. to
    ///   stall a TLS handshake.
    static func start(silent: Bool = false) async throws -> TestHTTPServer {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let stats = Stats()
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 512)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                stats.connections.add(1, ordering: .relaxed)
                if silent {
                    return channel.eventLoop.makeSucceededVoidFuture()
                }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(RouteHandler(stats: stats))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        guard let port = channel.localAddress?.port else {
            throw TestServerError.noPort
        }
        return TestHTTPServer(group: group, channel: channel, stats: stats, port: port)
    }

    func stop() async throws {
        try? await channel.close()
        try await group.shutdownGracefully()
    }

    /// A port on 127.0.0.1 that nothing listens on (bound, then closed).
    static func closedPort() async throws -> Int {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let channel = try await ServerBootstrap(group: group).bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress?.port
        try await channel.close()
        try await group.shutdownGracefully()
        guard let port else { throw TestServerError.noPort }
        return port
    }
}

enum TestServerError: Error {
    case noPort
}

private final class RouteHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let stats: TestHTTPServer.Stats
    private var head: HTTPRequestHead?
    private var body = ByteBuffer()

    init(stats: TestHTTPServer.Stats) {
        self.stats = stats
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body.clear()
        case .body(var chunk):
            body.writeBuffer(&chunk)
        case .end:
            stats.requests.add(1, ordering: .relaxed)
            guard let head else { return }
            route(context: context, head: head)
        }
    }

    private func route(context: ChannelHandlerContext, head: HTTPRequestHead) {
        let (path, query) = Self.split(head.uri)
        switch path {
        case "/hello":
            respond(context, status: .ok, body: ByteBuffer(string: "hello"))
        case "/echo":
            var headers = HTTPHeaders()
            headers.add(name: "X-Saw-Expect", value: head.headers["expect"].first ?? "none")
            respond(context, status: .ok, headers: headers, body: body)
        case "/slow":
            let delay = Int64(query["ms"] ?? "") ?? 1000
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.eventLoop.scheduleTask(in: .milliseconds(delay)) {
                let (handler, context) = loopBound.value
                handler.respond(context, status: .ok, body: ByteBuffer(string: "slow"))
            }
        case "/big":
            let count = Int(query["n"] ?? "") ?? 0
            let chunked = query["mode"] == "chunked"
            var headers = HTTPHeaders()
            if chunked {
                headers.add(name: "Transfer-Encoding", value: "chunked")
            } else {
                headers.add(name: "Content-Length", value: String(count))
            }
            context.write(
                wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .ok, headers: headers))),
                promise: nil
            )
            var remaining = count
            while remaining > 0 {
                let size = min(remaining, 16 * 1024)
                context.write(
                    wrapOutboundOut(.body(.byteBuffer(ByteBuffer(repeating: UInt8(ascii: "x"), count: size)))),
                    promise: nil
                )
                remaining -= size
            }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        case "/headers":
            var headers = HTTPHeaders()
            headers.add(name: "Retry-After", value: "120")
            headers.add(name: "Sunset", value: "Sat, 31 Dec 2033 23:59:59 GMT")
            headers.add(name: "Deprecation", value: "true")
            headers.add(name: "X-Multi", value: "a")
            headers.add(name: "X-Multi", value: "b")
            respond(context, status: .serviceUnavailable, headers: headers, body: ByteBuffer(string: "later"))
        case "/truncate":
            var headers = HTTPHeaders()
            if query["mode"] == "chunked" {
                headers.add(name: "Transfer-Encoding", value: "chunked")
            } else {
                headers.add(name: "Content-Length", value: "100000")
            }
            context.write(
                wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .ok, headers: headers))),
                promise: nil
            )
            context.writeAndFlush(
                wrapOutboundOut(.body(.byteBuffer(ByteBuffer(repeating: UInt8(ascii: "y"), count: 1000)))),
                promise: nil
            )
            context.close(promise: nil)
        case "/hang":
            break
        default:
            respond(context, status: .notFound, body: ByteBuffer(string: "no route"))
        }
    }

    private func respond(
        _ context: ChannelHandlerContext,
        status: HTTPResponseStatus,
        headers: HTTPHeaders = HTTPHeaders(),
        body: ByteBuffer
    ) {
        var headers = headers
        headers.add(name: "Content-Length", value: String(body.readableBytes))
        let version = head?.version ?? .http1_1
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: version, status: status, headers: headers))),
            promise: nil
        )
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    private static func split(_ uri: String) -> (String, [String: String]) {
        guard let mark = uri.firstIndex(of: "?") else { return (uri, [:]) }
        var query: [String: String] = [:]
        for pair in uri[uri.index(after: mark)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            query[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        return (String(uri[..<mark]), query)
    }
}
