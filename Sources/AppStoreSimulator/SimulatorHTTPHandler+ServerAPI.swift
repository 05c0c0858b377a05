import NIOCore
import NIOHTTP1
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// The App Store Server API side of the handler (docs/simulator.md, "The Server API"): route, authenticate
/// the JWT (401), apply the per-endpoint limit (429, 4290000) and the fault plan, then answer from
/// `ServerAPIService`.
extension SimulatorHTTPHandler {
    func serverAPIRequest(
        context: ChannelHandlerContext,
        head: HTTPRequestHead,
        path: String,
        body: ByteBuffer,
        keepAlive: Bool
    ) {
        guard let route = ServerAPIRoute(uri: head.uri, isGET: head.method == .GET, isPOST: head.method == .POST)
        else {
            stats.record(path: "/inApps (unknown)", httpStatus: 404, appleStatus: nil, fault: nil)
            respond(
                context: context,
                status: .notFound,
                body: Self.bytes(Array("Not Found\n".utf8)),
                contentType: "text/plain",
                keepAlive: keepAlive
            )
            return
        }
        if let failure = authenticate(head.headers.first(name: "Authorization")) {
            stats.recordAuthFailure(failure.rawValue)
            stats.record(path: route.statsPath, httpStatus: 401, appleStatus: nil, fault: nil)
            respond(
                context: context,
                status: .unauthorized,
                body: Self.bytes(Array("Unauthenticated\n".utf8)),
                contentType: "text/plain",
                keepAlive: keepAlive
            )
            return
        }
        let admission = stats.admit()
        let limit = limits.limit(route.endpoint, sandbox: route.sandbox)
        let (admitted, freeAt) =
            admission.admitted
            ? stats.admitServerAPI(key: route.statsPath, limit: limit)
            : (false, DispatchTimeNanos.now() + 1_000_000_000)
        guard admitted else {
            // Retry-After: the UNIX time in milliseconds when the window has room again, as Apple sends it.
            let wait = Int64((freeAt &- min(freeAt, DispatchTimeNanos.now())) / 1_000_000)
            rateLimited(
                context: context,
                route: route,
                retryAt: SimClock.real.now() + max(1, wait),
                fault: nil,
                keepAlive: keepAlive
            )
            return
        }
        let fault = faults.decide(sequence: admission.sequence)
        let delay = faults.delay(sequence: admission.sequence)
        if delay > 0 {
            context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(delay)) {
                self.performServerAPI(
                    context: context,
                    route: route,
                    body: body,
                    fault: fault,
                    sequence: admission.sequence,
                    keepAlive: keepAlive
                )
            }
        } else {
            performServerAPI(
                context: context,
                route: route,
                body: body,
                fault: fault,
                sequence: admission.sequence,
                keepAlive: keepAlive
            )
        }
    }

    private func rateLimited(
        context: ChannelHandlerContext,
        route: ServerAPIRoute,
        retryAt: Int64,
        fault: FaultKind?,
        keepAlive: Bool
    ) {
        stats.record(path: route.statsPath, httpStatus: 429, appleStatus: 4_290_000, fault: fault)
        respond(
            context: context,
            status: .tooManyRequests,
            body: ServerAPIService.error(4_290_000).body,
            keepAlive: keepAlive,
            extra: [("Retry-After", String(retryAt))]
        )
    }

    /// The retryable error a verifyReceipt status fault becomes on the Server API: 21005 is 5000001, 21002
    /// is 4040002, and 211xx cycles through 4040002, 4040004, 4040006 and 5000001.
    static func retryableCode(_ fault: FaultKind, sequence: UInt64) -> Int {
        switch fault {
        case .status21005: return 5_000_001
        case .status21002: return 4_040_002
        default: return [4_040_002, 4_040_004, 4_040_006, 5_000_001][Int(sequence % 4)]
        }
    }

    private func performServerAPI(
        context: ChannelHandlerContext,
        route: ServerAPIRoute,
        body: ByteBuffer,
        fault: FaultKind?,
        sequence: UInt64,
        keepAlive: Bool
    ) {
        guard context.channel.isActive else { return }
        let path = route.statsPath
        switch fault {
        case nil, .truncated:
            let signatureFault = fault == nil ? faults.decideSignature(sequence: sequence) : nil
            let outcome = serverAPIOutcome(route: route, body: body, fault: signatureFault)
            stats.record(path: path, httpStatus: outcome.httpStatus, appleStatus: outcome.errorCode, fault: fault)
            if let signatureFault, outcome.httpStatus == 200 { stats.recordServerAPIFault(signatureFault.rawValue) }
            if fault == .truncated {
                respondTruncated(context: context, body: outcome.body)
            } else {
                respond(
                    context: context,
                    status: HTTPResponseStatus(statusCode: outcome.httpStatus),
                    body: outcome.body,
                    keepAlive: keepAlive
                )
            }
        case .http500, .http503:
            let code = fault == .http500 ? 500 : 503
            stats.record(path: path, httpStatus: code, appleStatus: nil, fault: fault)
            respond(
                context: context,
                status: HTTPResponseStatus(statusCode: code),
                body: Self.bytes(Array(Self.errorPage(code).utf8)),
                contentType: "text/html",
                keepAlive: keepAlive
            )
        case .http429:
            rateLimited(
                context: context,
                route: route,
                retryAt: SimClock.real.now() + Int64(faults.retryAfterSeconds) * 1000,
                fault: fault,
                keepAlive: keepAlive
            )
        case .reset, .hang:
            stats.record(path: path, httpStatus: 0, appleStatus: nil, fault: fault)
            if let fault { dropConnection(context: context, fault: fault) }
        case .status21005, .status21002, .status211xx:
            let outcome = ServerAPIService.error(Self.retryableCode(fault ?? .status211xx, sequence: sequence))
            stats.record(path: path, httpStatus: outcome.httpStatus, appleStatus: outcome.errorCode, fault: fault)
            respond(
                context: context,
                status: HTTPResponseStatus(statusCode: outcome.httpStatus),
                body: outcome.body,
                keepAlive: keepAlive
            )
        case .malformedJSON:
            stats.record(path: path, httpStatus: 200, appleStatus: nil, fault: fault)
            let garbage = #"{"signedTransactionInfo":"eyJhbGciOi"#
            respond(context: context, status: .ok, body: Self.bytes(Array(garbage.utf8)), keepAlive: keepAlive)
        }
    }

    /// The service's answer to a routed request the limits and the fault plan let through.
    private func serverAPIOutcome(
        route: ServerAPIRoute,
        body: ByteBuffer,
        fault: SignatureFault?
    ) -> ServerAPIService.Outcome {
        switch route.endpoint {
        case .notificationHistory:
            return body.withUnsafeReadableBytes {
                serverAPI.notificationHistory(body: Array($0), sandbox: route.sandbox, query: route.query, fault: fault)
            }
        case .orderLookup:
            return serverAPI.orderLookup(route.id, sandbox: route.sandbox, fault: fault)
        default:
            return serverAPI.answer(
                route.endpoint,
                sandbox: route.sandbox,
                idText: route.id,
                query: route.query,
                fault: fault
            )
        }
    }

    /// nil when the token is good; a verified token is remembered for the connection until it expires.
    private func authenticate(_ authorization: String?) -> APITokenAuthenticator.Failure? {
        let now = SimClock.real.now()
        if let accepted = acceptedToken, now < accepted.expires, let authorization,
            authorization.hasPrefix("Bearer "), authorization.utf8.dropFirst(7).elementsEqual(accepted.token)
        {
            return nil
        }
        switch authenticator.check(authorization: authorization, now: now) {
        case .success(let accepted):
            acceptedToken = accepted
            return nil
        case .failure(let box):
            return box.failure
        }
    }
}
