import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one scripted HTTP/1.1 server of the tests, on 127.0.0.1 (raw sockets, a thread per connection,
/// keep-alive): used where the simulator cannot misbehave the way a test needs (21007 on production AND
/// 21008 on sandbox, a 21004 for chosen receipts only) and to capture the exact requests a client sends.
///
/// `@unchecked Sendable`: the listening descriptor is immutable after `init`; the request log is
/// guarded by a `Mutex`; connection threads only read the immutable handler.
public final class LoopbackHTTPServer: @unchecked Sendable {
    /// One request as received.
    public struct Request: Sendable {
        public var method: String
        public var path: String
        public var headers: [String: String]
        public var body: [UInt8]
    }

    /// A scripted answer: status, headers, body.
    public struct Response: Sendable {
        public var status: Int
        public var headers: [(String, String)]
        public var body: [UInt8]

        public init(status: Int, headers: [(String, String)], body: [UInt8]) {
            self.status = status
            self.headers = headers
            self.body = body
        }

        public static func json(_ text: String, status: Int = 200) -> Response {
            Response(status: status, headers: [("Content-Type", "application/json")], body: Array(text.utf8))
        }
    }

    public let port: Int
    private let listener: Int32
    private let handler: @Sendable (Request) -> Response
    private let log = Mutex<[Request]>([])
    private let finished = DispatchSemaphore(value: 0)

    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Requests received so far, in arrival order.
    public var requests: [Request] { log.withLock { $0 } }

    public struct StartError: Error, CustomStringConvertible {
        var step: String
        public var description: String { "LoopbackHTTPServer: \(step) failed (errno \(errno))" }
    }

    public init(handler: @escaping @Sendable (Request) -> Response) throws {
        self.handler = handler
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

    /// Stops accepting and waits for the accept thread to end (open connections end when their client
    /// closes them).
    public func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        _ = finished.wait(timeout: .now() + 10)
        close(listener)
    }

    private func acceptLoop() {
        defer { finished.signal() }
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            let thread = Thread { [self] in
                serve(client)
                close(client)
            }
            thread.start()
        }
    }

    /// Answers requests on one connection until the client closes it (or asks to).
    private func serve(_ fd: Int32) {
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var buffer: [UInt8] = []
        while serveOne(fd, &buffer) {}
    }

    /// Reads one request (headers, then Content-Length bytes) and answers it; false when the connection
    /// should end.
    private func serveOne(_ fd: Int32, _ buffer: inout [UInt8]) -> Bool {
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
            body: Array(buffer[headerEnd..<(headerEnd + contentLength)])
        )
        buffer.removeFirst(headerEnd + contentLength)
        let keepAlive = headers["connection"]?.lowercased() != "close"
        log.withLock { $0.append(request) }
        let response = handler(request)
        var text = "HTTP/1.1 \(response.status) Scripted\r\nContent-Length: \(response.body.count)\r\n"
        text += keepAlive ? "Connection: keep-alive\r\n" : "Connection: close\r\n"
        for (name, value) in response.headers { text += "\(name): \(value)\r\n" }
        text += "\r\n"
        let bytes = Array(text.utf8) + response.body
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            sent += n
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
