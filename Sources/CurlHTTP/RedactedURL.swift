import CCurl

/// The loggable part of a request URL: `scheme://host[:port]/path`. Query strings, fragments
/// and user info can carry secrets, so they never reach error messages.
struct RedactedURL: Sendable, Equatable {
    let scheme: String
    let host: String
    let port: String?
    let path: String
    /// The original query string (without `?`), kept only to scrub it from curl's messages.
    let query: String?

    /// Parses `url` with libcurl's own URL parser so the description matches what curl will
    /// connect to. Returns `nil` for URLs curl rejects.
    init?(parsing url: String) {
        guard let handle = curl_url() else { return nil }
        defer { curl_url_cleanup(handle) }
        guard curl_url_set(handle, CURLUPART_URL, url, 0) == CURLUE_OK else { return nil }

        func part(_ which: CURLUPart) -> String? {
            var pointer: UnsafeMutablePointer<CChar>?
            guard curl_url_get(handle, which, &pointer, 0) == CURLUE_OK, let pointer else { return nil }
            defer { curl_free(pointer) }
            return String(cString: pointer)
        }

        guard let scheme = part(CURLUPART_SCHEME), let host = part(CURLUPART_HOST) else { return nil }
        self.scheme = scheme.lowercased()
        self.host = host
        self.port = part(CURLUPART_PORT)
        self.path = part(CURLUPART_PATH) ?? "/"
        self.query = part(CURLUPART_QUERY)
    }

    var isHTTP: Bool { scheme == "http" || scheme == "https" }

    var description: String {
        var text = "\(scheme)://\(host)"
        if let port {
            text += ":\(port)"
        }
        return text + path
    }

    /// A safe stand-in for an unparseable URL: only its length, since the text may hold secrets.
    static func describeUnparseable(_ url: String) -> String {
        "<unparseable URL, \(url.utf8.count) chars>"
    }

    /// Removes the original URL and its query from a libcurl message, should curl ever echo them.
    static func scrub(_ message: String, url: String, query: String?) -> String {
        var scrubbed = message
        if !url.isEmpty {
            scrubbed = scrubbed.replacingAll(url, with: "<url>")
        }
        if let query, !query.isEmpty {
            scrubbed = scrubbed.replacingAll(query, with: "<query>")
        }
        return scrubbed
    }
}

extension String {
    /// Plain substring replacement without Foundation.
    fileprivate func replacingAll(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        var result = ""
        var rest = self[...]
        while let range = rest.firstRange(of: target) {
            result += rest[..<range.lowerBound]
            result += replacement
            rest = rest[range.upperBound...]
        }
        result += rest
        return result
    }
}
