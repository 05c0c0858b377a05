extension CurlHTTPClient {
    /// Client-wide limits and defaults. Per-request values in `HTTPRequest` override the defaults.
    public struct Configuration: Sendable {
        /// Upper bound on open connections across all hosts (CURLMOPT_MAX_TOTAL_CONNECTIONS; 0 = unlimited).
        public var maxConnections: Int
        /// Upper bound on open connections per host (CURLMOPT_MAX_HOST_CONNECTIONS; 0 = unlimited).
        /// Requests beyond it wait for a free (kept-alive) connection.
        public var maxHostConnections: Int
        public var connectTimeout: Duration
        public var totalTimeout: Duration
        /// Default cap on response body size.
        public var maxResponseBytes: Int
        /// Sent as `User-Agent` unless empty.
        public var userAgent: String
        /// A PEM file of CA certificates that HTTPS servers must chain to (CURLOPT_CAINFO). It replaces
        /// the system's trust store (no CA directory is searched besides); nil uses the system's.
        public var caFile: String?

        public init(
            maxConnections: Int = 64,
            maxHostConnections: Int = 16,
            connectTimeout: Duration = .seconds(10),
            totalTimeout: Duration = .seconds(60),
            maxResponseBytes: Int = 16 * 1024 * 1024,
            userAgent: String = "renewal-reconciler",
            caFile: String? = nil
        ) {
            self.maxConnections = maxConnections
            self.maxHostConnections = maxHostConnections
            self.connectTimeout = connectTimeout
            self.totalTimeout = totalTimeout
            self.maxResponseBytes = maxResponseBytes
            self.userAgent = userAgent
            self.caFile = caFile
        }
    }
}
