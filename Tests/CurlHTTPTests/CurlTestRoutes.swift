import TestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The routes the client tests ask a `LoopbackHTTPServer` for, a few of them misbehaving on purpose:
///
/// - `GET /hello` → 200 "hello"
/// - `POST /echo` → 200 with the request body; `X-Saw-Expect` tells whether an Expect header came
/// - `GET /big?n=N&mode=length|chunked` → N bytes, with Content-Length or chunked
/// - `GET /headers` → 503 with Retry-After, Sunset, Deprecation and a repeated X-Multi
/// - `GET /truncate?mode=length|chunked` → 1000 bytes of a 100000-byte body, then the connection is closed
/// - `GET /hang` → never answers
enum CurlTestRoutes {
    static func answer(_ request: LoopbackHTTPServer.Request) -> LoopbackHTTPServer.Response {
        let (path, query) = split(request.path)
        let framing: LoopbackHTTPServer.Response.Framing = query["mode"] == "chunked" ? .chunked : .contentLength
        switch path {
        case "/hello":
            return .text("hello")
        case "/echo":
            return LoopbackHTTPServer.Response(
                status: 200,
                headers: [("X-Saw-Expect", request.headers["expect"] ?? "none")],
                body: request.body
            )
        case "/big":
            let count = Int(query["n"] ?? "") ?? 0
            return LoopbackHTTPServer.Response(
                status: 200,
                headers: [],
                body: [UInt8](repeating: UInt8(ascii: "x"), count: count),
                framing: framing
            )
        case "/headers":
            return .text(
                "later",
                status: 503,
                headers: [
                    ("Retry-After", "120"), ("Sunset", "Sat, 31 Dec 2033 23:59:59 GMT"), ("Deprecation", "true"),
                    ("X-Multi", "a"), ("X-Multi", "b"),
                ]
            )
        case "/truncate":
            return LoopbackHTTPServer.Response(
                status: 200,
                headers: [],
                body: [UInt8](repeating: UInt8(ascii: "y"), count: 100_000),
                framing: framing,
                delivery: .cutAfter(bytes: 1000)
            )
        case "/hang":
            return .unanswered
        default:
            return .text("no route", status: 404)
        }
    }

    /// The path and its query parameters.
    private static func split(_ target: String) -> (String, [String: String]) {
        guard let mark = target.firstIndex(of: "?") else { return (target, [:]) }
        var query: [String: String] = [:]
        for pair in target[target.index(after: mark)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            query[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        return (String(target[..<mark]), query)
    }
}
