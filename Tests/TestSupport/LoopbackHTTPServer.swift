import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one scripted HTTP/1.1 server of the tests, on 127.0.0.1 (raw sockets, a thread per connection,
/// keep-alive): used where the simulator cannot misbehave the way a test needs (21007 on production AND
/// 21008 on sandbox, a 21004 for chosen receipts only), to capture the exact requests a client sends,
/// and to test the HTTP client itself: chunked bodies, bodies cut off by a close, requests never
/// answered, servers that accept and stay silent, and bytes that are not HTTP (answered 400, then closed).
///
/// A handler may block (e.g. sleep to answer slowly): it runs on its connection's own thread.
///
/// Connections have no idle timeout (a test starved of CPU may leave one idle for long, and a request
/// left unanswered stays so): they end when the client closes them or at `stop()`.
///
/// `@unchecked Sendable`: the listening descriptor is immutable after `init`; the request log and the
/// open connections are guarded by `Mutex`es, the connection count is atomic; connection threads only
/// read the immutable handler.
public final class LoopbackHTTPServer: @unchecked Sendable {
    /// One request as received.
    public struct Request: Sendable {
        public var method: String
        public var path: String
        public var headers: [String: String]
        public var body: [UInt8]
        /// Which TCP connection carried it: 1 for the first accepted, counting up.
        public var connection: Int
    }

    /// A scripted answer: status, headers, body, and how the body goes on the wire.
    public struct Response: Sendable {
        /// How the body is delimited.
        public enum Framing: Sendable {
            /// A `Content-Length` header with the body's full size.
            case contentLength
            /// `Transfer-Encoding: chunked`, chunks of at most 16 KiB.
            case chunked
        }

        /// How much of the answer is sent.
        public enum Delivery: Sendable {
            /// All of it; the connection stays open when the client keeps it alive.
            case whole
            /// The head (framing the whole body) and the first `bytes` of the body, then the connection is
            /// closed: a body cut off mid-way.
            case cutAfter(bytes: Int)
            /// Nothing: the request stays unanswered until the client closes the connection.
            case never
        }

        public var status: Int
        public var headers: [(String, String)]
        public var body: [UInt8]
        public var framing: Framing
        public var delivery: Delivery

        public init(
            status: Int,
            headers: [(String, String)],
            body: [UInt8],
            framing: Framing = .contentLength,
            delivery: Delivery = .whole
        ) {
            self.status = status
            self.headers = headers
            self.body = body
            self.framing = framing
            self.delivery = delivery
        }

        public static func json(_ text: String, status: Int = 200) -> Response {
            Response(status: status, headers: [("Content-Type", "application/json")], body: Array(text.utf8))
        }

        /// A plain-text answer.
        public static func text(_ text: String, status: Int = 200, headers: [(String, String)] = []) -> Response {
            Response(status: status, headers: headers, body: Array(text.utf8))
        }

        /// No answer at all (`Delivery.never`).
        public static let unanswered = Response(status: 0, headers: [], body: [], delivery: .never)
    }

    public let port: Int
    private let listener: Int32
    private let handler: @Sendable (Request) -> Response
    private let silent: Bool
    private let log = Mutex<[Request]>([])
    private let connections = Atomic<Int>(0)
    /// Descriptors of the connections still open; a descriptor leaves the set before it is closed, so
    /// `stop()` never touches a number the system has handed out again.
    private let open = Mutex<Set<Int32>>([])
    private let finished = DispatchSemaphore(value: 0)

    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Requests received so far, in arrival order.
    public var requests: [Request] { log.withLock { $0 } }

    /// TCP connections accepted so far.
    public var acceptedConnections: Int { connections.load(ordering: .relaxed) }
    /// Connections that carried at least one request (a connection opened and never used is not counted).
    public var connectionsWithRequests: Int { Set(requests.map(\.connection)).count }

    public struct StartError: Error, CustomStringConvertible {
        var step: String
        public var description: String { "LoopbackHTTPServer: \(step) failed (errno \(errno))" }
    }

    /// - Parameters:
    ///   - silent: accept connections but never answer or parse anything on them (e.g. to stall a TLS
    ///     handshake); `handler` is then never called.
    ///   - handler: the answer to each request, called on the request's connection thread.
    public init(silent: Bool = false, handler: @escaping @Sendable (Request) -> Response) throws {
        self.handler = handler
        self.silent = silent
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw StartError(step: "socket") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            close(fd)
            throw StartError(step: "bind/listen")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else {
            close(fd)
            throw StartError(step: "getsockname")
        }
        self.listener = fd
        self.port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in self.acceptLoop() }
        thread.start()
    }

    /// Stops accepting, waits for the accept thread to end, and shuts the open connections down (their
    /// threads then end).
    public func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        _ = finished.wait(timeout: .now() + 10)
        close(listener)
        open.withLock { fds in
            for fd in fds { shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    private func acceptLoop() {
        defer { finished.signal() }
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            let number = connections.add(1, ordering: .relaxed).newValue
            open.withLock { _ = $0.insert(client) }
            let thread = Thread { [self] in
                serve(client, connection: number)
                open.withLock { _ = $0.remove(client) }
                close(client)
            }
            thread.start()
        }
    }

    /// Answers requests on one connection until the client closes it (or asks to).
    private func serve(_ fd: Int32, connection: Int) {
        if silent {
            Self.drain(fd)
            return
        }
        var buffer: [UInt8] = []
        while serveOne(fd, &buffer, connection: connection) {}
    }

    /// Reads and discards until the client closes the connection (or `stop()` shuts it down).
    private static func drain(_ fd: Int32) {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while chunk.withUnsafeMutableBytes({ recv(fd, $0.baseAddress, $0.count, 0) }) > 0 {}
    }

    /// Sends all of `bytes`; false when the connection failed.
    private static func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            sent += n
        }
        return true
    }

    /// Ends a connection the server gives up on: no more writes, then whatever the client still sends is
    /// read until it closes, so the close is a FIN after the last byte sent (unread input would make it a
    /// reset that can overtake that byte).
    private static func finish(_ fd: Int32) {
        shutdown(fd, Int32(SHUT_WR))
        drain(fd)
    }

    /// Reads one request (headers, then Content-Length bytes) and answers it; false when the connection
    /// should end.
    private func serveOne(_ fd: Int32, _ buffer: inout [UInt8], connection: Int) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        let separator: [UInt8] = [13, 10, 13, 10]
        var headerEnd: Int?
        var contentLength = 0
        var head: [String] = []
        while true {
            if headerEnd == nil, let end = Self.find(separator, in: buffer) {
                headerEnd = end + 4
                head = String(decoding: buffer[..<end], as: UTF8.self).components(separatedBy: "\r\n")
                for line in head.dropFirst() {
                    let parts = line.split(separator: ":", maxSplits: 1)
                    if parts.count == 2, parts[0].lowercased() == "content-length" {
                        contentLength = Int(parts[1].trimmingCharacters(in: .whitespaces)) ?? 0
                    }
                }
            }
            if let headerEnd, buffer.count >= headerEnd + contentLength { break }
            // A request starts with its method; anything else (a TLS ClientHello, say) is not HTTP.
            if let first = buffer.first, !(UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(first) {
                let refusal = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                if Self.sendAll(fd, Array(refusal.utf8)) { Self.finish(fd) }
                return false
            }
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { return false }
            buffer.append(contentsOf: chunk[0..<n])
        }
        guard let headerEnd, let requestLine = head.first else { return false }
        let words = requestLine.split(separator: " ")
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2 {
                headers[parts[0].lowercased()] = parts[1].trimmingCharacters(in: .whitespaces)
            }
        }
        let request = Request(
            method: words.first.map(String.init) ?? "",
            path: words.count > 1 ? String(words[1]) : "",
            headers: headers,
            body: Array(buffer[headerEnd..<(headerEnd + contentLength)]),
            connection: connection
        )
        buffer.removeFirst(headerEnd + contentLength)
        let keepAlive = headers["connection"]?.lowercased() != "close"
        log.withLock { $0.append(request) }
        let response = handler(request)
        let sentBytes: Int
        switch response.delivery {
        case .never:
            Self.drain(fd)
            return false
        case .whole:
            sentBytes = response.body.count
        case .cutAfter(let bytes):
            sentBytes = min(max(bytes, 0), response.body.count)
        }
        var text = "HTTP/1.1 \(response.status) Scripted\r\n"
        switch response.framing {
        case .contentLength: text += "Content-Length: \(response.body.count)\r\n"
        case .chunked: text += "Transfer-Encoding: chunked\r\n"
        }
        text += keepAlive ? "Connection: keep-alive\r\n" : "Connection: close\r\n"
        for (name, value) in response.headers { text += "\(name): \(value)\r\n" }
        text += "\r\n"
        var bytes = Array(text.utf8)
        let body = response.body[..<sentBytes]
        switch response.framing {
        case .contentLength:
            bytes += body
        case .chunked:
            var start = body.startIndex
            while start < body.endIndex {
                let end = min(start + 16 * 1024, body.endIndex)
                bytes += Array("\(String(end - start, radix: 16))\r\n".utf8) + body[start..<end] + [13, 10]
                start = end
            }
            if sentBytes == response.body.count { bytes += Array("0\r\n\r\n".utf8) }
        }
        guard Self.sendAll(fd, bytes) else { return false }
        if case .cutAfter = response.delivery {
            Self.finish(fd)
            return false
        }
        return keepAlive
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for i in 0...(haystack.count - needle.count) where haystack[i] == needle[0] {
            if Array(haystack[i..<(i + needle.count)]) == needle { return i }
        }
        return nil
    }
}
