import CCurl
import Foundation

/// Creates and configures the easy handle for one request: URL, method and body, headers,
/// timeouts, the size cap, TLS verification (always on, TLS 1.2 at least, the configured CA file), HTTP/2
/// over TLS and the callbacks.
enum CurlEasyConfigurator {
    /// A configured easy handle for `transfer`, or the error that refuses the request before any byte is
    /// sent: an invalid URL, method or header field, or options libcurl would not take. On success the
    /// transfer owns the header list; on failure nothing is left allocated.
    static func makeHandle(
        for transfer: CurlTransfer,
        configuration: CurlHTTPClient.Configuration
    ) -> Result<UnsafeMutableRawPointer, HTTPClientError> {
        let request = transfer.request
        guard let redacted = transfer.redacted, redacted.isHTTP else {
            return .failure(transfer.error(.invalidURL, message: "the URL is not an absolute http or https URL"))
        }
        guard request.method.isValidToken else {
            return .failure(transfer.error(.invalidRequest, message: "the method is not a valid HTTP token"))
        }
        let headerList: UnsafeMutablePointer<curl_slist>?
        switch makeHeaderList(for: transfer) {
        case .success(let list): headerList = list
        case .failure(let error): return .failure(error)
        }

        guard let easy = curl_easy_init() else {
            curl_slist_free_all(headerList)
            return .failure(transfer.error(.other, message: "curl_easy_init failed"))
        }
        transfer.headerList = headerList

        var failures: [String] = []
        func check(_ code: CURLcode, _ what: String) {
            if code != CURLE_OK {
                failures.append("\(what): \(String(cString: curl_easy_strerror(code)))")
            }
        }
        configureConnection(
            easy,
            transfer: transfer,
            isHTTPS: redacted.scheme == "https",
            configuration: configuration,
            check: check
        )
        configureLimitsAndHeaders(easy, transfer: transfer, configuration: configuration, check: check)
        configureCallbacks(easy, check: check)
        configureMethod(easy, request: request, check: check)

        guard failures.isEmpty else {
            curl_easy_cleanup(easy)
            transfer.easy = nil
            curl_slist_free_all(headerList)
            transfer.headerList = nil
            return .failure(
                transfer.error(
                    .invalidRequest,
                    message: "could not configure the request: \(failures.joined(separator: "; "))"
                )
            )
        }
        return .success(easy)
    }

    /// The request's header fields as a libcurl list, plus an empty `Expect:` so that bodies are sent without
    /// waiting for `100 Continue`; a malformed field fails the request and frees the list built so far.
    private static func makeHeaderList(
        for transfer: CurlTransfer
    ) -> Result<UnsafeMutablePointer<curl_slist>?, HTTPClientError> {
        var headerList: UnsafeMutablePointer<curl_slist>?
        for (name, value) in transfer.request.headers {
            guard let line = headerLine(name: name, value: value) else {
                curl_slist_free_all(headerList)
                return .failure(
                    transfer.error(.invalidRequest, message: "header field '\(sanitizedName(name))' is malformed")
                )
            }
            headerList = curl_slist_append(headerList, line)
        }
        // Never wait for `100 Continue`: send bodies straight away.
        headerList = curl_slist_append(headerList, "Expect:")
        return .success(headerList)
    }

    /// URL, protocols, HTTP version and TLS: peer and host verification always on, TLS 1.2 at least, only the
    /// configured CA file when there is one; TCP keep-alive, and redirects never followed.
    private static func configureConnection(
        _ easy: UnsafeMutableRawPointer,
        transfer: CurlTransfer,
        isHTTPS: Bool,
        configuration: CurlHTTPClient.Configuration,
        check: (CURLcode, String) -> Void
    ) {
        check(ccurl_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, transfer.errorBuffer), "error buffer")
        check(ccurl_easy_setopt_string(easy, CURLOPT_URL, transfer.request.url), "URL")
        check(ccurl_easy_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "http,https"), "protocols")
        check(ccurl_easy_setopt_string(easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"), "redirect protocols")
        check(ccurl_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1), "no signal")
        check(ccurl_easy_setopt_long(easy, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS)), "HTTP version")
        if isHTTPS {
            // Prefer multiplexing on an HTTP/2 connection being set up over opening another one. Only
            // for TLS: over plain http curl learns "no multiplexing" only from the first response, so
            // waiting would serialise every request behind it.
            check(ccurl_easy_setopt_long(easy, CURLOPT_PIPEWAIT, 1), "pipewait")
        }
        check(ccurl_easy_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, 1), "verify peer")
        check(ccurl_easy_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, 2), "verify host")
        // TLS 1.2 at least, whatever the system's OpenSSL configuration allows.
        check(ccurl_easy_setopt_long(easy, CURLOPT_SSLVERSION, Int(CURL_SSLVERSION_TLSv1_2)), "minimum TLS version")
        if let caFile = configuration.caFile {
            // Only this file's CAs: no CA directory besides (Debian's libcurl searches /etc/ssl/certs).
            check(ccurl_easy_setopt_string(easy, CURLOPT_CAINFO, caFile), "CA file")
            check(ccurl_easy_setopt_string(easy, CURLOPT_CAPATH, nil), "CA path")
        }
        check(ccurl_easy_setopt_long(easy, CURLOPT_TCP_KEEPALIVE, 1), "TCP keep-alive")
        check(ccurl_easy_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 0), "follow location")
    }

    /// The connect and total timeouts (the request's own, else the client's), the response size cap, the
    /// user agent and the header list the transfer holds.
    private static func configureLimitsAndHeaders(
        _ easy: UnsafeMutableRawPointer,
        transfer: CurlTransfer,
        configuration: CurlHTTPClient.Configuration,
        check: (CURLcode, String) -> Void
    ) {
        let request = transfer.request
        let connectTimeout = request.connectTimeout ?? configuration.connectTimeout
        let totalTimeout = request.totalTimeout ?? configuration.totalTimeout
        check(
            ccurl_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, connectTimeout.curlMilliseconds),
            "connect timeout"
        )
        check(ccurl_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, totalTimeout.curlMilliseconds), "timeout")
        // Refuse early when Content-Length already exceeds the cap; the write callback enforces it otherwise.
        check(
            ccurl_easy_setopt_off_t(easy, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(transfer.maxResponseBytes)),
            "max size"
        )
        if !configuration.userAgent.isEmpty {
            check(ccurl_easy_setopt_string(easy, CURLOPT_USERAGENT, configuration.userAgent), "user agent")
        }
        check(ccurl_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, transfer.headerList), "headers")
    }

    /// The body and header callbacks, which hand libcurl's bytes to the `CurlTransfer` passed as their
    /// user data.
    private static func configureCallbacks(_ easy: UnsafeMutableRawPointer, check: (CURLcode, String) -> Void) {
        check(
            ccurl_easy_setopt_write_function(easy) { pointer, size, count, userdata in
                let length = size * count
                guard let userdata else { return 0 }
                let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
                guard length > 0, let pointer else { return length }
                // Returning a short count makes libcurl abort the transfer with CURLE_WRITE_ERROR.
                return transfer.receiveBody(UnsafeRawBufferPointer(start: pointer, count: length)) ? length : 0
            },
            "write function"
        )
        check(
            ccurl_easy_setopt_header_function(easy) { pointer, size, count, userdata in
                let length = size * count
                guard let userdata else { return 0 }
                let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
                if length > 0, let pointer {
                    transfer.receiveHeaderLine(UnsafeRawBufferPointer(start: pointer, count: length))
                }
                return length
            },
            "header function"
        )
    }

    private static func configureMethod(
        _ easy: UnsafeMutableRawPointer,
        request: HTTPRequest,
        check: (CURLcode, String) -> Void
    ) {
        switch request.method {
        case .get:
            check(ccurl_easy_setopt_long(easy, CURLOPT_HTTPGET, 1), "GET")
        case .head:
            check(ccurl_easy_setopt_long(easy, CURLOPT_NOBODY, 1), "HEAD")
        default:
            if request.method == .post {
                check(ccurl_easy_setopt_long(easy, CURLOPT_POST, 1), "POST")
            } else {
                check(ccurl_easy_setopt_string(easy, CURLOPT_CUSTOMREQUEST, request.method.rawValue), "method")
            }
            let body = request.body ?? Data()
            if request.method == .post || !body.isEmpty {
                // libcurl copies the bytes, so the Swift buffer need not outlive this call.
                check(ccurl_easy_setopt_off_t(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)), "body size")
                body.withUnsafeBytes { bytes in
                    let pointer = bytes.baseAddress ?? UnsafeRawPointer(("" as StaticString).utf8Start)
                    check(
                        ccurl_easy_setopt_pointer(
                            easy,
                            CURLOPT_COPYPOSTFIELDS,
                            UnsafeMutableRawPointer(mutating: pointer)
                        ),
                        "body"
                    )
                }
            }
        }
    }

    /// `Name: value` for libcurl, or `nil` when name or value could smuggle extra header lines.
    /// An empty value uses curl's `Name;` form, since `Name:` would remove the header instead.
    static func headerLine(name: String, value: String) -> String? {
        guard HTTPMethod(rawValue: name).isValidToken else { return nil }
        guard !value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) else { return nil }
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        return trimmed.isEmpty ? "\(name);" : "\(name): \(trimmed)"
    }

    /// A header name shown in an error: printable ASCII only and short.
    private static func sanitizedName(_ name: String) -> String {
        String(
            String.UnicodeScalarView(name.unicodeScalars.prefix(40).map { $0.isASCII && $0.value >= 0x20 ? $0 : "?" })
        )
    }
}
