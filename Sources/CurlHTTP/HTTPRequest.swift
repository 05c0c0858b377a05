import Foundation

/// One HTTP request to send through `CurlHTTPClient`: target, method, headers, body and
/// the per-request limits (timeouts and response-size cap) that override the client defaults.
public struct HTTPRequest: Sendable {
    /// Absolute `http://` or `https://` URL. Only scheme, host, port and path ever appear in errors.
    public var url: String
    public var method: HTTPMethod
    /// Request headers in order; names are sent as given. An empty value is sent as an empty header.
    public var headers: [(String, String)]
    /// Request body; `nil` sends none. For GET/HEAD a body is ignored.
    public var body: Data?
    /// Time allowed to establish the connection (TCP + TLS). `nil` uses the client default.
    public var connectTimeout: Duration?
    /// Time allowed for the whole exchange, including waiting for a free connection. `nil` uses the client default.
    public var totalTimeout: Duration?
    /// Largest response body accepted; larger responses fail with `.responseTooLarge`. `nil` uses the client default.
    public var maxResponseBytes: Int?

    public init(
        url: String,
        method: HTTPMethod = .get,
        headers: [(String, String)] = [],
        body: Data? = nil,
        connectTimeout: Duration? = nil,
        totalTimeout: Duration? = nil,
        maxResponseBytes: Int? = nil
    ) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.connectTimeout = connectTimeout
        self.totalTimeout = totalTimeout
        self.maxResponseBytes = maxResponseBytes
    }
}
