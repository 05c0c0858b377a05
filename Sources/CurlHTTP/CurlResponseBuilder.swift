import CCurl

/// Turns a finished easy handle into the caller's result: the response on success, or a
/// classified `HTTPClientError` (with curl's message, scrubbed of the URL query) on failure.
enum CurlResponseBuilder {
    static func outcome(
        of transfer: CurlTransfer,
        easy: UnsafeMutableRawPointer,
        result: CURLcode
    ) -> Result<HTTPResponse, HTTPClientError> {
        guard result == CURLE_OK else {
            // Bytes of request sent: 0 means the deadline passed while still connecting (TCP or TLS)
            // or waiting for a free connection. Connect time cannot tell, it is 0 on reused connections.
            var requestBytes = 0
            _ = ccurl_easy_getinfo_long(easy, CURLINFO_REQUEST_SIZE, &requestBytes)
            let code = CurlErrorClassifier.classify(
                result,
                exceededCap: transfer.exceededCap,
                requestSent: requestBytes > 0
            )
            var message = transfer.curlMessage(for: result)
            var tlsFailure: TLSFailure?
            if code == .responseTooLarge {
                message = "the response body exceeds the limit of \(transfer.maxResponseBytes) bytes"
            } else if code == .tls {
                // Name the reason in words before OpenSSL's (docs/operations.md, "HTTPS to Apple").
                let failure = TLSFailure.classify(result, detail: message) ?? .handshake
                tlsFailure = failure
                message = "\(failure.explanation) [\(failure.rawValue)]: \(message)"
            }
            var error = transfer.error(code, curlCode: Int(result.rawValue), message: message)
            error.tlsFailure = tlsFailure
            return .failure(error)
        }

        var status = 0
        _ = ccurl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        var versionCode = 0
        _ = ccurl_easy_getinfo_long(easy, CURLINFO_HTTP_VERSION, &versionCode)
        var totalMicros: curl_off_t = 0
        _ = ccurl_easy_getinfo_off_t(easy, CURLINFO_TOTAL_TIME_T, &totalMicros)

        return .success(
            HTTPResponse(
                status: status,
                headers: transfer.headers,
                body: transfer.body,
                httpVersion: version(versionCode),
                totalTime: .microseconds(totalMicros)
            )
        )
    }

    static func version(_ code: Int) -> HTTPResponse.Version {
        switch code {
        case Int(CURL_HTTP_VERSION_1_0): return .http1_0
        case Int(CURL_HTTP_VERSION_1_1): return .http1_1
        case Int(CURL_HTTP_VERSION_2_0): return .http2
        case Int(CURL_HTTP_VERSION_3): return .http3
        default: return .unknown
        }
    }
}
