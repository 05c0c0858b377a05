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
    /// A TLS failure that may pass on retry (a reset mid-handshake, ...).
    case tls
    /// The TLS connection was refused for a reason that will not go away on retry (an untrusted or
    /// mismatched certificate, no TLS version in common): the reason, naming what was refused.
    case tlsRefused(String)
    /// Anything else; the text must not contain secrets or receipt data.
    case other(String)

    /// The reason of a `tlsRefused`, else nil.
    public var tlsRefusal: String? {
        if case .tlsRefused(let reason) = self { return reason }
        return nil
    }

    public var description: String {
        switch self {
        case .timeout: "timeout"
        case .connectionFailed: "connection failed"
        case .connectionReset: "connection reset"
        case .responseTooLarge: "response too large"
        case .tls: "TLS error"
        case .tlsRefused(let reason): "TLS refused: \(reason)"
        case .other(let text): text
        }
    }
}
