/// A failure below HTTP (no usable response), as the HTTP client reports it.
///
/// Defined here so that classification does not depend on the HTTP module; the client maps its
/// own errors onto these kinds.
public enum TransportFailure: Sendable, Equatable, CustomStringConvertible {
    case timeout
    case connectionFailed
    case connectionReset
    /// The body exceeded the client's size cap.
    case responseTooLarge
    case tls
    /// Anything else; the text must not contain secrets or receipt data.
    case other(String)

    public var description: String {
        switch self {
        case .timeout: "timeout"
        case .connectionFailed: "connection failed"
        case .connectionReset: "connection reset"
        case .responseTooLarge: "response too large"
        case .tls: "TLS error"
        case .other(let text): text
        }
    }
}
