import NIOCore
import NIOHTTP1
import NIOPosix

/// The per-connection HTTP handler: routes, applies the rate limit and faults, answers verifyReceipt.
///
/// Runs on its channel's event loop only; shared state lives in `SimulatorStats` and `VerifyService`.
final class SimulatorHTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let service: VerifyService
    let serverAPI: ServerAPIService
    let authenticator: APITokenAuthenticator
    /// The App Store Connect API's reports: the team key's tokens, the truth, the hourly budget.
    let connectAuthenticator: APITokenAuthenticator
    let reports: ReportsService
    let reportsHourlyLimit: Int
    let stats: SimulatorStats
    let faults: FaultPlan
    /// The last API token this connection presented that verified, and when it expires (ms): a keep-alive
    /// client reusing its token is not verified again on every request.
    var acceptedToken: APITokenAuthenticator.Accepted?
    private var head: HTTPRequestHead?
    private var body: ByteBuffer?
    private var tooLarge = false
    private static let maxBody = 16 * 1024 * 1024

    let limits: ServerAPILimits

    init(
        service: VerifyService,
        serverAPI: ServerAPIService,
        stats: SimulatorStats,
        faults: FaultPlan,
        limits: ServerAPILimits = .apple,
        reports: ReportsService,
        reportsHourlyLimit: Int = 3600
    ) {
        self.limits = limits
        self.reports = reports
        self.reportsHourlyLimit = reportsHourlyLimit
        self.connectAuthenticator = APITokenAuthenticator(identity: serverAPI.identity, scope: .appStoreConnect)
        self.service = service
        self.serverAPI = serverAPI
        self.authenticator = APITokenAuthenticator(identity: serverAPI.identity)
        self.stats = stats
        self.faults = faults
    }

    func channelActive(context: ChannelHandlerContext) {
        stats.connectionOpened()
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        stats.connectionClosed()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let h):
            head = h
            body = nil
            tooLarge = false
        case .body(var chunk):
            if (body?.readableBytes ?? 0) + chunk.readableBytes > Self.maxBody {
                tooLarge = true
            } else if body == nil {
                body = chunk
            } else {
                body?.writeBuffer(&chunk)
            }
        case .end:
            guard let h = head else { return }
            head = nil
            handle(context: context, head: h, body: body ?? ByteBuffer())
            body = nil
        }
    }

    private func handle(context: ChannelHandlerContext, head: HTTPRequestHead, body: ByteBuffer) {
        let path = head.uri.utf8.contains(63) ? String(head.uri.prefix { $0 != "?" }) : head.uri
        let keepAlive = head.isKeepAlive
        switch path {
        case "/verifyReceipt", "/sandbox/verifyReceipt":
            verify(context: context, head: head, path: path, body: body, keepAlive: keepAlive)
        case _ where Self.reportPaths.contains(path):
            reportRequest(context: context, head: head, path: path, keepAlive: keepAlive)
        case _ where path.hasPrefix("/inApps/") || path.hasPrefix("/sandbox/inApps/"):
            serverAPIRequest(context: context, head: head, path: path, body: body, keepAlive: keepAlive)
        case "/_health":
            respond(
                context: context,
                status: .ok,
                body: Self.bytes(Array("ok\n".utf8)),
                contentType: "text/plain",
                keepAlive: keepAlive
            )
        case "/_stats" where head.method == .GET:
            respond(context: context, status: .ok, body: Self.bytes(stats.json()), keepAlive: keepAlive)
        case "/_stats/reset" where head.method == .POST:
            stats.reset()
            respond(
                context: context,
                status: .ok,
                body: Self.bytes(Array("{\"reset\":true}".utf8)),
                keepAlive: keepAlive
            )
        default:
            respond(
                context: context,
                status: .notFound,
                body: Self.bytes(Array("not found\n".utf8)),
                contentType: "text/plain",
                keepAlive: keepAlive
            )
        }
    }

    static func bytes(_ b: [UInt8]) -> ByteBuffer {
        var buf = ByteBufferAllocator().buffer(capacity: b.count)
        buf.writeBytes(b)
        return buf
    }

    private func verify(
        context: ChannelHandlerContext,
        head: HTTPRequestHead,
        path: String,
        body: ByteBuffer,
        keepAlive: Bool
    ) {
        if tooLarge {
            stats.record(path: path, httpStatus: 413, appleStatus: nil, fault: nil)
            respond(context: context, status: .payloadTooLarge, body: ByteBuffer(), keepAlive: false)
            return
        }
        let admission = stats.admit()
        guard admission.admitted else {
            stats.record(path: path, httpStatus: 429, appleStatus: nil, fault: nil)
            respond(
                context: context,
                status: .tooManyRequests,
                body: Self.bytes(Array("Too Many Requests\n".utf8)),
                contentType: "text/plain",
                keepAlive: keepAlive,
                extra: [("Retry-After", String(faults.retryAfterSeconds))]
            )
            return
        }
        let sandboxPath = path == "/sandbox/verifyReceipt"
        let fault = faults.decide(sequence: admission.sequence)
        let delay = faults.delay(sequence: admission.sequence)
        if delay > 0 {
            context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(delay)) {
                self.perform(
                    context: context,
                    head: head,
                    path: path,
                    body: body,
                    sandboxPath: sandboxPath,
                    fault: fault,
                    sequence: admission.sequence,
                    keepAlive: keepAlive
                )
            }
        } else {
            perform(
                context: context,
                head: head,
                path: path,
                body: body,
                sandboxPath: sandboxPath,
                fault: fault,
                sequence: admission.sequence,
                keepAlive: keepAlive
            )
        }
    }

    private func outcome(head: HTTPRequestHead, body: ByteBuffer, sandboxPath: Bool) -> VerifyService.Outcome {
        guard head.method == .POST else { return VerifyService.statusOutcome(21000) }
        return body.withUnsafeReadableBytes { service.verify(body: $0, sandboxPath: sandboxPath) }
    }

    private func perform(
        context: ChannelHandlerContext,
        head: HTTPRequestHead,
        path: String,
        body: ByteBuffer,
        sandboxPath: Bool,
        fault: FaultKind?,
        sequence: UInt64,
        keepAlive: Bool
    ) {
        guard context.channel.isActive else { return }
        let env = sandboxPath ? "Sandbox" : "Production"
        switch fault {
        case nil:
            let result = outcome(head: head, body: body, sandboxPath: sandboxPath)
            stats.record(path: path, httpStatus: 200, appleStatus: result.appleStatus, fault: nil)
            respond(context: context, status: .ok, body: result.body, keepAlive: keepAlive)
        case .http500:
            stats.record(path: path, httpStatus: 500, appleStatus: nil, fault: fault)
            respond(
                context: context,
                status: .internalServerError,
                body: Self.bytes(Array(Self.errorPage(500).utf8)),
                contentType: "text/html",
                keepAlive: keepAlive
            )
        case .http503:
            stats.record(path: path, httpStatus: 503, appleStatus: nil, fault: fault)
            respond(
                context: context,
                status: .serviceUnavailable,
                body: Self.bytes(Array(Self.errorPage(503).utf8)),
                contentType: "text/html",
                keepAlive: keepAlive
            )
        case .http429:
            stats.record(path: path, httpStatus: 429, appleStatus: nil, fault: fault)
            respond(
                context: context,
                status: .tooManyRequests,
                body: Self.bytes(Array("Too Many Requests\n".utf8)),
                contentType: "text/plain",
                keepAlive: keepAlive,
                extra: [("Retry-After", String(faults.retryAfterSeconds))]
            )
        case .reset, .hang:
            stats.record(path: path, httpStatus: 0, appleStatus: nil, fault: fault)
            if let fault { dropConnection(context: context, fault: fault) }
        case .status21005, .status21002:
            let status = fault == .status21005 ? 21005 : 21002
            stats.record(path: path, httpStatus: 200, appleStatus: status, fault: fault)
            respond(context: context, status: .ok, body: VerifyService.statusOutcome(status).body, keepAlive: keepAlive)
        case .status211xx:
            let (status, retryable) = FaultPlan.status211xx(sequence: sequence)
            var json = "{\"environment\":\"\(env)\",\"status\":\(status)"
            if let r = retryable { json += ",\"\(r.key)\":\(r.json)" }
            json += "}"
            stats.record(path: path, httpStatus: 200, appleStatus: status, fault: fault)
            respond(context: context, status: .ok, body: Self.bytes(Array(json.utf8)), keepAlive: keepAlive)
        case .malformedJSON:
            stats.record(path: path, httpStatus: 200, appleStatus: nil, fault: fault)
            let garbage = "{\"environment\":\"\(env)\",\"receipt\":{\"in_app\":[{\"quantity\":\"1\",,\"product_id\""
            respond(context: context, status: .ok, body: Self.bytes(Array(garbage.utf8)), keepAlive: keepAlive)
        case .truncated:
            let result = outcome(head: head, body: body, sandboxPath: sandboxPath)
            stats.record(path: path, httpStatus: 200, appleStatus: nil, fault: fault)
            respondTruncated(context: context, body: result.body, version: head.version)
        }
    }

    /// The connection-level faults, for both APIs: `.reset` closes with RST (SO_LINGER {on, 0}: close()
    /// sends RST instead of FIN); `.hang` says nothing and closes after `--hang-ms`.
    func dropConnection(context: ChannelHandlerContext, fault: FaultKind) {
        if fault == .reset {
            if let provider = context.channel as? SocketOptionProvider {
                _ = provider.setSoLinger(linger(l_onoff: 1, l_linger: 0))
            }
            context.close(promise: nil)
        } else {
            context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(faults.hangMilliseconds)) {
                context.close(promise: nil)
            }
        }
    }

    /// The `.truncated` fault, for both APIs: headers promising the whole body, half of it, then close.
    func respondTruncated(context: ChannelHandlerContext, body: ByteBuffer, version: HTTPVersion = .http1_1) {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/json")
        headers.add(name: "Content-Length", value: String(body.readableBytes))
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: version, status: .ok, headers: headers))),
            promise: nil
        )
        let half = body.getSlice(at: body.readerIndex, length: body.readableBytes / 2) ?? ByteBuffer()
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(half)))).assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }

    static func errorPage(_ code: Int) -> String {
        let title = code == 503 ? "Service Unavailable" : "Internal Server Error"
        return "<html><head><title>\(code) \(title)</title></head><body><h1>\(title)</h1></body></html>\n"
    }

    func respond(
        context: ChannelHandlerContext,
        status: HTTPResponseStatus,
        body: ByteBuffer,
        contentType: String = "application/json",
        keepAlive: Bool,
        extra: [(String, String)] = []
    ) {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: contentType)
        headers.add(name: "Content-Length", value: String(body.readableBytes))
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        for (k, v) in extra { headers.add(name: k, value: v) }
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))),
            promise: nil
        )
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            done.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        }
    }
}
