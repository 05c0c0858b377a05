/// Why an HTTP exchange failed. The `description` names the method and the URL's scheme, host,
/// port and path, never its query string, credentials or the request/response body.
public struct HTTPClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of failure, coarse enough for retry decisions.
    public enum Code: String, Sendable, Hashable, CustomStringConvertible {
        /// The total timeout elapsed after the request started going out (while sending or awaiting/reading the response).
        case timeout
        /// No usable connection before the deadline: the connect timeout, or the total timeout while
        /// still connecting (TCP/TLS) or waiting for a free connection slot. Nothing was sent.
        case connectTimeout
        /// Could not connect: refused, unreachable, or the host name did not resolve.
        case connectionFailed
        /// The connection broke mid-exchange: reset, closed early, truncated body, nothing received.
        case connectionReset
        /// TLS handshake or certificate verification failed; `tlsFailure` says why.
        case tls
        /// The response body exceeded the configured cap (declared or actual size).
        case responseTooLarge
        /// The URL is malformed or not `http`/`https`.
        case invalidURL
        /// The request itself is malformed (bad method or header).
        case invalidRequest
        /// The transfer was cancelled (client shutdown or task cancellation).
        case cancelled
        /// Anything else; see `curlCode` and `message`.
        case other

        public var description: String { rawValue }
    }

    public var code: Code
    /// The libcurl `CURLcode` value, or `nil` when the error did not come from libcurl.
    public var curlCode: Int?
    /// Human-readable detail (libcurl's message, redacted of the URL's query).
    public var message: String
    public var method: String
    /// `scheme://host[:port]/path` of the request, without query, fragment or user info.
    public var target: String
    /// For `.tls`: what went wrong, and whether retrying can help (`TLSFailure.isRefusal`).
    public var tlsFailure: TLSFailure?

    public init(
        code: Code,
        curlCode: Int? = nil,
        message: String,
        method: String,
        target: String,
        tlsFailure: TLSFailure? = nil
    ) {
        self.code = code
        self.curlCode = curlCode
        self.message = message
        self.method = method
        self.target = target
        self.tlsFailure = tlsFailure
    }

    /// `host[:port]` of the request (no scheme, path or query), for messages that name the server.
    public var host: String {
        guard let schemeEnd = target.range(of: "://") else { return target }
        let rest = target[schemeEnd.upperBound...]
        return String(rest.prefix { $0 != "/" })
    }

    public var description: String {
        var text = "HTTP \(method) \(target) failed (\(code)): \(message)"
        if let curlCode {
            text += " [curl error \(curlCode)]"
        }
        return text
    }
}
