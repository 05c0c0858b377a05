import CCurl
import Foundation

/// One request in flight: the easy handle, its C resources and the response being assembled.
///
/// `@unchecked Sendable` because it is handed to the driver queue once and from then on only
/// touched there (libcurl calls the write/header callbacks from inside `curl_multi_socket_action`,
/// which runs on that queue). While its easy handle is in the multi handle it is kept alive by an
/// `Unmanaged` retain that the driver releases exactly once when the transfer ends.
final class CurlTransfer: @unchecked Sendable {
    let id: UInt64
    let request: HTTPRequest
    let redacted: RedactedURL?
    let maxResponseBytes: Int
    let completion: @Sendable (Result<HTTPResponse, HTTPClientError>) -> Void

    var easy: UnsafeMutableRawPointer?
    var headerList: UnsafeMutablePointer<curl_slist>?
    /// libcurl writes its detailed message here (CURLOPT_ERRORBUFFER).
    let errorBuffer: UnsafeMutablePointer<CChar>

    var body = Data()
    var headers = HTTPHeaders()
    var exceededCap = false
    private var bodyStarted = false

    init(
        id: UInt64,
        request: HTTPRequest,
        maxResponseBytes: Int,
        completion: @escaping @Sendable (Result<HTTPResponse, HTTPClientError>) -> Void
    ) {
        self.id = id
        self.request = request
        self.redacted = RedactedURL(parsing: request.url)
        self.maxResponseBytes = maxResponseBytes
        self.completion = completion
        self.errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        self.errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    deinit {
        releaseCResources()
        errorBuffer.deallocate()
    }

    /// Frees the easy handle and header list. Call after the handle left the multi handle.
    func releaseCResources() {
        if let easy {
            curl_easy_cleanup(easy)
            self.easy = nil
        }
        if let headerList {
            curl_slist_free_all(headerList)
            self.headerList = nil
        }
    }

    /// `scheme://host:port/path` for messages, never the query.
    var target: String {
        redacted?.description ?? RedactedURL.describeUnparseable(request.url)
    }

    func error(_ code: HTTPClientError.Code, curlCode: Int? = nil, message: String) -> HTTPClientError {
        HTTPClientError(
            code: code,
            curlCode: curlCode,
            message: RedactedURL.scrub(message, url: request.url, query: redacted?.query),
            method: request.method.rawValue,
            target: target
        )
    }

    /// libcurl's detailed message for the last failure, or its generic text for `code`.
    func curlMessage(for code: CURLcode) -> String {
        let detailed = String(cString: errorBuffer)
        if !detailed.isEmpty {
            return detailed
        }
        return String(cString: curl_easy_strerror(code))
    }

    // MARK: callbacks (driver queue)

    /// Body bytes from CURLOPT_WRITEFUNCTION. Returns `false` to abort the transfer when the cap is exceeded.
    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bodyStarted = true
        if body.count + bytes.count > maxResponseBytes {
            exceededCap = true
            return false
        }
        body.append(contentsOf: bytes)
        return true
    }

    /// One header line from CURLOPT_HEADERFUNCTION (status lines, fields, the blank terminator).
    /// A new status line starts a new response (after `100 Continue` or a redirect), so earlier
    /// headers are discarded and only the final response's headers remain. Trailers are ignored.
    func receiveHeaderLine(_ bytes: UnsafeRawBufferPointer) {
        guard !bodyStarted else { return }
        var line = Substring(String(decoding: bytes, as: UTF8.self))
        // "\r\n" is a single Character in Swift, so test for any newline rather than "\r" and "\n".
        while let last = line.last, last.isNewline {
            line.removeLast()
        }
        if line.hasPrefix("HTTP/") {
            headers.removeAll()
            return
        }
        if line.isEmpty {
            return
        }
        if let first = line.first, first == " " || first == "\t" {
            headers.appendContinuation(String(line.trimmingSpaces()))
            return
        }
        guard let colon = line.firstIndex(of: ":") else { return }
        let name = String(line[..<colon].trimmingSpaces())
        let value = String(line[line.index(after: colon)...].trimmingSpaces())
        headers.add(name: name, value: value)
        if name.lowercased() == "content-length", let length = Int(value), length > 0, length <= maxResponseBytes {
            body.reserveCapacity(length)
        }
    }
}

extension Substring {
    fileprivate func trimmingSpaces() -> Substring {
        var result = self
        while let first = result.first, first == " " || first == "\t" {
            result.removeFirst()
        }
        while let last = result.last, last == " " || last == "\t" {
            result.removeLast()
        }
        return result
    }
}
