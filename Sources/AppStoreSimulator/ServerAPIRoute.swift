/// A Server API request line taken apart: which endpoint, which environment, the path's id and the query.
struct ServerAPIRoute: Sendable {
    var endpoint: ServerAPIService.Endpoint
    var sandbox: Bool
    /// The `{transactionId}` (or `{orderId}`) segment (empty for notification history).
    var id: Substring
    var query: Substring
    /// The `/_stats` key: the path without the id, e.g. `/sandbox/inApps/v1/subscriptions`.
    var statsPath: String

    /// Parses `uri` (path and query); nil when the path is not one of the Server API's or the method is wrong.
    init?(uri: String, isGET: Bool, isPOST: Bool) {
        let path: Substring
        if let q = uri.firstIndex(of: "?") {
            path = uri[..<q]
            query = uri[uri.index(after: q)...]
        } else {
            path = uri[...]
            query = ""
        }
        sandbox = path.hasPrefix("/sandbox/")
        let rest = sandbox ? path.dropFirst("/sandbox".count) : path
        let prefixes: [(String, ServerAPIService.Endpoint)] = [
            ("/inApps/v1/subscriptions/", .subscriptions), ("/inApps/v1/transactions/", .transactions),
            ("/inApps/v2/history/", .history), ("/inApps/v2/refund/lookup/", .refundHistory),
            ("/inApps/v1/lookup/", .orderLookup),
        ]
        for (prefix, endpoint) in prefixes where rest.hasPrefix(prefix) {
            guard isGET else { return nil }
            let id = rest.dropFirst(prefix.count)
            guard !id.contains("/") else { return nil }
            self.endpoint = endpoint
            self.id = id
            statsPath = (sandbox ? "/sandbox" : "") + String(prefix.dropLast())
            return
        }
        guard rest == "/inApps/v1/notifications/history", isPOST else { return nil }
        endpoint = .notificationHistory
        id = ""
        statsPath = String(path)
    }
}
