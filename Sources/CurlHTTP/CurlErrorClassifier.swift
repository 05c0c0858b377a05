import CCurl

/// Maps a finished transfer's libcurl result to an `HTTPClientError.Code`. A pure function so the
/// mapping can be tested without a network.
enum CurlErrorClassifier {
    /// - Parameters:
    ///   - code: the transfer's `CURLcode`.
    ///   - exceededCap: the write callback refused data because the body cap was reached.
    ///   - requestSent: some of the request had been sent (`CURLINFO_REQUEST_SIZE > 0`), so the
    ///     connection (TCP and TLS) was up.
    static func classify(_ code: CURLcode, exceededCap: Bool, requestSent: Bool) -> HTTPClientError.Code {
        if exceededCap {
            return .responseTooLarge
        }
        switch code {
        case CURLE_OPERATION_TIMEDOUT:
            return requestSent ? .timeout : .connectTimeout
        case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            return .connectionFailed
        case CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE,
            CURLE_HTTP2, CURLE_HTTP2_STREAM, CURLE_WEIRD_SERVER_REPLY, CURLE_BAD_CONTENT_ENCODING:
            return .connectionReset
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM,
            CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ENGINE_NOTFOUND,
            CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_SHUTDOWN_FAILED,
            CURLE_SSL_CRL_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
            CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CLIENTCERT, CURLE_USE_SSL_FAILED:
            return .tls
        case CURLE_FILESIZE_EXCEEDED:
            return .responseTooLarge
        case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL:
            return .invalidURL
        case CURLE_ABORTED_BY_CALLBACK:
            return .cancelled
        default:
            return .other
        }
    }
}
