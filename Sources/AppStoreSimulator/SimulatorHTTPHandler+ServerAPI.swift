import NIOCore
import NIOHTTP1

/// The App Store Server API side of the handler (docs/simulator.md, "The Server API"): route, authenticate
/// the JWT (401), then answer from `ServerAPIService`.
extension SimulatorHTTPHandler {
    func serverAPIRequest(context: ChannelHandlerContext, head: HTTPRequestHead, path: String, body: ByteBuffer,
                          keepAlive: Bool) {
        guard let route = ServerAPIRoute(uri: head.uri, isGET: head.method == .GET, isPOST: head.method == .POST)
        else {
            stats.record(path: "/inApps (unknown)", httpStatus: 404, appleStatus: nil, fault: nil)
            respond(context: context, status: .notFound, body: Self.bytes(Array("Not Found\n".utf8)),
                    contentType: "text/plain", keepAlive: keepAlive)
            return
        }
        if let failure = authenticate(head.headers.first(name: "Authorization")) {
            stats.recordAuthFailure(failure.rawValue)
            stats.record(path: route.statsPath, httpStatus: 401, appleStatus: nil, fault: nil)
            respond(context: context, status: .unauthorized, body: Self.bytes(Array("Unauthenticated\n".utf8)),
                    contentType: "text/plain", keepAlive: keepAlive)
            return
        }
        let outcome = serverAPI.answer(route.endpoint, sandbox: route.sandbox, idText: route.id, query: route.query)
        stats.record(path: route.statsPath, httpStatus: outcome.httpStatus, appleStatus: outcome.errorCode, fault: nil)
        respond(context: context, status: HTTPResponseStatus(statusCode: outcome.httpStatus), body: outcome.body,
                keepAlive: keepAlive)
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
