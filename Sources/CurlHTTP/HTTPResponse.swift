import Foundation

/// A complete HTTP response as received by `CurlHTTPClient`: the final status, its headers
/// (those of the final response only, never of a `100 Continue`), the body and timing.
public struct HTTPResponse: Sendable {
    /// The HTTP protocol version the response arrived over.
    public enum Version: String, Sendable, Equatable, CustomStringConvertible {
        case http1_0 = "HTTP/1.0"
        case http1_1 = "HTTP/1.1"
        case http2 = "HTTP/2"
        case http3 = "HTTP/3"
        case unknown = "HTTP/?"

        public var description: String { rawValue }
    }

    public var status: Int
    public var headers: HTTPHeaders
    public var body: Data
    public var httpVersion: Version
    /// Wall time of the whole transfer as measured by libcurl (includes waiting for a connection).
    public var totalTime: Duration

    public init(status: Int, headers: HTTPHeaders, body: Data, httpVersion: Version, totalTime: Duration) {
        self.status = status
        self.headers = headers
        self.body = body
        self.httpVersion = httpVersion
        self.totalTime = totalTime
    }
}
