import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A verifyReceipt endpoint on loopback whose answers a test scripts per receipt: plain HTTP/1.1 with
/// keep-alive on POSIX sockets, one thread per connection. For pipeline tests that need answers the
/// simulator does not give (a 21004 for some receipts only, a 21010 for a chosen row).
final class ScriptedAppleServer: @unchecked Sendable {
    /// The JSON body to answer for one request's `receipt-data`.
    typealias Script = @Sendable (_ receipt: String) -> String

    let port: Int
    private let listener: Int32
    private let script: Script
    private let lock = NSLock()
    private var served: [String] = []

    var productionURL: String { "http://127.0.0.1:\(port)/verifyReceipt" }
    var sandboxURL: String { "http://127.0.0.1:\(port)/sandbox/verifyReceipt" }

    /// The receipts asked about so far, in arrival order.
    var requests: [String] {
        lock.lock()
        defer { lock.unlock() }
        return served
    }

    init(script: @escaping Script) throws {
        self.script = script
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw FixtureError("socket: errno \(errno)") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let size = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, size) }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            close(fd)
            throw FixtureError("bind/listen: errno \(errno)")
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = Int(UInt16(bigEndian: actual.sin_port))
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// Stops accepting; connections already open end when their client closes them.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            let thread = Thread { [self] in serve(client) }
            thread.start()
        }
    }

    private func serve(_ fd: Int32) {
        defer { close(fd) }
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            // Headers.
            var headerEnd: Int?
            while headerEnd == nil {
                if let end = Self.find([13, 10, 13, 10], in: buffer) {
                    headerEnd = end
                    break
                }
                let n = read(fd, &chunk, chunk.count)
                if n <= 0 { return }
                buffer.append(contentsOf: chunk[0..<n])
            }
            guard let end = headerEnd else { return }
            let head = String(decoding: buffer[0..<end], as: UTF8.self).lowercased()
            var contentLength = 0
            for line in head.split(separator: "\r\n") where line.hasPrefix("content-length:") {
                contentLength = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) ?? 0
            }
            let bodyStart = end + 4
            while buffer.count < bodyStart + contentLength {
                let n = read(fd, &chunk, chunk.count)
                if n <= 0 { return }
                buffer.append(contentsOf: chunk[0..<n])
            }
            let body = Data(buffer[bodyStart..<(bodyStart + contentLength)])
            buffer.removeFirst(bodyStart + contentLength)
            let request = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
            let receipt = request?["receipt-data"] as? String ?? ""
            lock.lock()
            served.append(receipt)
            lock.unlock()
            let answer = Array(script(receipt).utf8)
            let header = Array(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(answer.count)\r\n\r\n".utf8
            )
            guard Self.writeAll(fd, header + answer) else { return }
        }
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count)
        where haystack[start..<(start + needle.count)].elementsEqual(needle) {
            return start
        }
        return nil
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }

    // MARK: Answers

    /// A status-only answer (`{"status": 21004}`).
    static func status(_ status: Int) -> String { "{\"status\": \(status)}" }

    /// A status-0 answer for one subscription: a single transaction `otid` of `productId` bought 30 days
    /// before `expires`, auto-renew on.
    static func valid(
        otid: String,
        productId: String = "com.example.renewals.pro.monthly",
        expires: Date,
        bundleId: String = "com.example.renewals"
    ) -> String {
        let expiresMs = Int64(expires.timeIntervalSince1970 * 1000)
        let purchaseMs = expiresMs - 30 * 86_400_000
        return """
            {"status": 0, "environment": "Production",
             "receipt": {"bundle_id": "\(bundleId)", "in_app": []},
             "latest_receipt_info": [{"transaction_id": "\(otid)", "original_transaction_id": "\(otid)",
                "product_id": "\(productId)", "quantity": "1", "purchase_date_ms": "\(purchaseMs)",
                "original_purchase_date_ms": "\(purchaseMs)", "expires_date_ms": "\(expiresMs)",
                "is_trial_period": "false", "is_in_intro_offer_period": "false",
                "subscription_group_identifier": "g1"}],
             "pending_renewal_info": [{"original_transaction_id": "\(otid)", "auto_renew_product_id": "\(productId)",
                "auto_renew_status": "1"}]}
            """
    }
}
