import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A tiny blocking HTTP/1.1 server on 127.0.0.1 (raw sockets, one thread, one request per connection)
/// whose answers the test scripts: used where the simulator cannot misbehave the way a test needs
/// (21007 on production AND 21008 on sandbox) and to capture the exact request bodies the client sends.
///
/// `@unchecked Sendable`: the listening descriptor is immutable after `init`; the request log is
/// guarded by a `Mutex`; the accept thread only reads the immutable handler.
final class LoopbackHTTPServer: @unchecked Sendable {
    /// One request as received.
    struct Request: Sendable {
        var method: String
        var path: String
        var headers: [String: String]
        var body: [UInt8]
    }

    /// A scripted answer: status, headers, body.
    struct Response: Sendable {
        var status: Int
        var headers: [(String, String)]
        var body: [UInt8]

        static func json(_ text: String, status: Int = 200) -> Response {
            Response(status: status, headers: [("Content-Type", "application/json")], body: Array(text.utf8))
        }
    }

    let port: Int
    private let listener: Int32
    private let handler: @Sendable (Request) -> Response
    private let log = Mutex<[Request]>([])
    private let finished = DispatchSemaphore(value: 0)

    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Requests received so far, in arrival order.
    var requests: [Request] { log.withLock { $0 } }

    struct StartError: Error, CustomStringConvertible {
        var step: String
        var description: String { "LoopbackHTTPServer: \(step) failed (errno \(errno))" }
    }

    init(handler: @escaping @Sendable (Request) -> Response) throws {
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

    /// Stops accepting and waits for the accept thread to end.
    func stop() {
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
            serve(client)
            close(client)
        }
    }

    /// Reads one request (headers, then Content-Length bytes), answers it, and closes.
    private func serve(_ fd: Int32) {
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var buffer: [UInt8] = []
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
            if n <= 0 { return }
            buffer.append(contentsOf: chunk[0..<n])
        }
        guard let headerEnd, let requestLine = head.first else { return }
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
        log.withLock { $0.append(request) }
        let response = handler(request)
        var text =
            "HTTP/1.1 \(response.status) Scripted\r\nContent-Length: \(response.body.count)\r\nConnection: close\r\n"
        for (name, value) in response.headers { text += "\(name): \(value)\r\n" }
        text += "\r\n"
        let bytes = Array(text.utf8) + response.body
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            sent += n
        }
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for i in 0...(haystack.count - needle.count) where haystack[i] == needle[0] {
            if Array(haystack[i..<(i + needle.count)]) == needle { return i }
        }
        return nil
    }
}
