import CCurl

/// Process-wide libcurl initialisation. `curl_global_init` is not thread-safe in curl 7.88, so it
/// runs exactly once through a lazily initialised static (Swift guarantees one-time, thread-safe init).
enum CurlGlobal {
    static let initResult: CURLcode = curl_global_init(Int(CURL_GLOBAL_DEFAULT))

    static var isInitialized: Bool { initResult == CURLE_OK }
}
