import CCurl

/// Why a TLS connection failed, read from libcurl's result code and its error buffer (OpenSSL's reason).
///
/// A *refusal* (every kind but `handshake`) is the client refusing the server, or the server refusing
/// the client's protocol versions: it happens again on every attempt until the configuration changes (a
/// CA file, the URL, a proxy in between), so callers should stop rather than retry. `handshake` is any
/// other TLS failure (a reset mid-handshake, a server speaking plain HTTP), which may pass on retry.
public enum TLSFailure: String, Sendable, Hashable, CustomStringConvertible {
    /// The certificate does not chain to a trusted CA: self-signed, or its CA is not in the trust store
    /// (the system's, or the configured CA file).
    case untrustedCertificate = "untrusted_certificate"
    /// The certificate is valid but names another host.
    case hostnameMismatch = "hostname_mismatch"
    /// The certificate (or one in its chain) has expired or is not yet valid.
    case certificateNotValidNow = "certificate_not_valid_now"
    /// Client and server have no TLS version in common: the server offers only versions below the
    /// client's minimum (TLS 1.2), or refuses the client's.
    case protocolVersion = "protocol_version"
    /// The configured CA file could not be used (missing, unreadable, no certificate in it).
    case caFile = "ca_file"
    /// Another certificate problem (bad signature, revoked, unusable key, pinned key mismatch, ...).
    case certificateRejected = "certificate_rejected"
    /// Any other handshake failure; not a refusal (it may pass on retry).
    case handshake

    /// True when retrying cannot help (everything but `handshake`).
    public var isRefusal: Bool { self != .handshake }

    /// What it means, in words, for messages (without curl's own detail).
    public var explanation: String {
        switch self {
        case .untrustedCertificate:
            "the server's certificate is not trusted (self-signed, or its CA is not in the trust store)"
        case .hostnameMismatch: "the server's certificate does not name this host"
        case .certificateNotValidNow: "the server's certificate has expired or is not yet valid"
        case .protocolVersion: "no TLS version in common (this client requires TLS 1.2 or later)"
        case .caFile: "the CA file cannot be used"
        case .certificateRejected: "the server's certificate was rejected"
        case .handshake: "the TLS handshake failed"
        }
    }

    public var description: String { rawValue }

    /// The kind of a failed transfer's TLS problem, or nil when `code` is not a TLS failure. `detail` is
    /// curl's error buffer (OpenSSL's reason), which tells the cases of one `CURLcode` apart.
    static func classify(_ code: CURLcode, detail: String) -> TLSFailure? {
        let text = detail.lowercased()
        switch code {
        case CURLE_PEER_FAILED_VERIFICATION:
            if text.contains("subject name") || text.contains("does not match") || text.contains("hostname mismatch") {
                return .hostnameMismatch
            }
            if text.contains("expired") || text.contains("not yet valid") {
                return .certificateNotValidNow
            }
            if text.contains("self-signed") || text.contains("self signed") || text.contains("local issuer")
                || text.contains("issuer certificate") || text.contains("unable to verify")
            {
                return .untrustedCertificate
            }
            return .certificateRejected
        case CURLE_SSL_CACERT_BADFILE:
            return .caFile
        case CURLE_SSL_CERTPROBLEM, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
            CURLE_SSL_INVALIDCERTSTATUS:
            return .certificateRejected
        case CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CIPHER, CURLE_USE_SSL_FAILED:
            if text.contains("protocol version") || text.contains("unsupported protocol")
                || text.contains("no protocols available")
            {
                return .protocolVersion
            }
            if text.contains("certificate verify failed") {
                return .untrustedCertificate
            }
            return .handshake
        case CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED,
            CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_CRL_BADFILE, CURLE_SSL_CLIENTCERT:
            return .handshake
        default:
            return nil
        }
    }
}
