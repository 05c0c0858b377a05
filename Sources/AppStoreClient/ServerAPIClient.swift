import AppStoreSignedData
import CurlHTTP
import Foundation
import ReceiptDomain

/// The App Store Server API on the project's libcurl layer: typed endpoints (statuses, a transaction history
/// page, a notification history page, an order lookup), one request per call, authenticated with a short-lived ES256 token
/// (`APITokenSigner`, reused until a minute before it expires), answered on a global queue with the body
/// decoded for a 200 (`ServerAPIResult`). It does not verify the signed data (the caller does, before
/// believing anything) and does not retry (the caller's `AttemptPlan` decides, and the caller sends under
/// each endpoint's rate limit). The token is sent in a header only and never logged.
public final class ServerAPIClient: Sendable {
    public let endpoints: ServerAPIEndpoints
    private let http: CurlHTTPClient
    private let signer: APITokenSigner

    public init(http: CurlHTTPClient, endpoints: ServerAPIEndpoints, signer: APITokenSigner) {
        self.http = http
        self.endpoints = endpoints
        self.signer = signer
    }

    /// Get All Subscription Statuses (`GET /inApps/v1/subscriptions/{transactionId}`).
    public func subscriptionStatuses(
        of transactionId: String,
        environment: AppleEnvironment,
        completion: @escaping @Sendable (ServerAPIResult<StatusResponse>) -> Void
    ) {
        send(
            .get,
            "/inApps/v1/subscriptions/" + Self.percentEncoded(transactionId),
            query: [],
            body: nil,
            environment: environment
        ) {
            completion(ServerAPIResult(attempt: $0, decode: StatusResponse.decode))
        }
    }

    /// One page of Get Transaction History v2 (`GET /inApps/v2/history/{transactionId}`); `revision` is the
    /// page after the first (the previous page's `revision`).
    public func transactionHistory(
        of transactionId: String,
        query: TransactionHistoryQuery,
        revision: String?,
        environment: AppleEnvironment,
        completion: @escaping @Sendable (ServerAPIResult<HistoryResponse>) -> Void
    ) {
        let path = "/inApps/v2/history/" + Self.percentEncoded(transactionId)
        send(.get, path, query: query.items(revision: revision), body: nil, environment: environment) {
            completion(ServerAPIResult(attempt: $0, decode: HistoryResponse.decode))
        }
    }

    /// One page of Get Notification History (`POST /inApps/v1/notifications/history`); `paginationToken` is
    /// the page after the first (the previous page's token, with the same `request`).
    public func notificationHistory(
        _ request: NotificationHistoryRequest,
        paginationToken: String?,
        environment: AppleEnvironment,
        completion: @escaping @Sendable (ServerAPIResult<NotificationHistoryResponse>) -> Void
    ) {
        let query = paginationToken.map { [("paginationToken", $0)] } ?? []
        send(.post, "/inApps/v1/notifications/history", query: query, body: request.json, environment: environment) {
            completion(ServerAPIResult(attempt: $0, decode: NotificationHistoryResponse.decode))
        }
    }

    /// Look Up Order ID (`GET /inApps/v1/lookup/{orderId}`): the transactions of the order id on a customer's App
    /// Store receipt. Production only (Apple has no such endpoint in the sandbox). As with every other endpoint the
    /// signed transactions are not verified here: the caller verifies each before believing it.
    public func lookUpOrder(
        orderId: String,
        environment: AppleEnvironment = .production,
        completion: @escaping @Sendable (ServerAPIResult<OrderLookupResponse>) -> Void
    ) {
        send(.get, "/inApps/v1/lookup/" + Self.percentEncoded(orderId), query: [], body: nil, environment: environment)
        {
            completion(ServerAPIResult(attempt: $0, decode: OrderLookupResponse.decode))
        }
    }

    private func send(
        _ method: HTTPMethod,
        _ path: String,
        query: [(String, String)],
        body: Data?,
        environment: AppleEnvironment,
        completion: @escaping @Sendable (ServerAPIAttemptResult) -> Void
    ) {
        var url = endpoints.base(for: environment) + path
        if !query.isEmpty {
            url +=
                "?" + query.map { Self.percentEncoded($0.0) + "=" + Self.percentEncoded($0.1) }.joined(separator: "&")
        }
        var headers = [("Authorization", "Bearer " + signer.token().value), ("Accept", "application/json")]
        if body != nil { headers.append(("Content-Type", "application/json")) }
        let request = HTTPRequest(
            url: url,
            method: method,
            headers: headers,
            body: body,
            connectTimeout: endpoints.connectTimeout,
            totalTimeout: endpoints.requestTimeout,
            maxResponseBytes: endpoints.maxResponseBytes
        )
        let started = ContinuousClock.now
        http.execute(request) { result in
            let elapsed = ContinuousClock.now - started
            switch result {
            case .success(let response):
                let bytes = [UInt8](response.body)
                let errorCode = response.status == 200 ? nil : Self.errorCode(in: bytes)
                completion(
                    ServerAPIAttemptResult(
                        environment: environment,
                        httpStatus: response.status,
                        errorCode: errorCode,
                        body: bytes,
                        retryAfter: response.headers["Retry-After"].flatMap { Self.retryAfter($0, now: Date()) },
                        transportFailure: nil,
                        elapsed: elapsed
                    )
                )
            case .failure(let error):
                completion(
                    ServerAPIAttemptResult(
                        environment: environment,
                        httpStatus: nil,
                        errorCode: nil,
                        body: [],
                        retryAfter: nil,
                        transportFailure: VerifyReceiptClient.transportFailure(for: error),
                        elapsed: elapsed
                    )
                )
            }
        }
    }

    /// Apple's `Retry-After` on a 429 is a UNIX time in milliseconds; delta-seconds and HTTP-dates (what
    /// proxies send) are read too. Capped at one day.
    public static func retryAfter(_ value: String, now: Date) -> Date? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if text.count >= 12, let millis = Int64(text) {
            let date = Date(timeIntervalSince1970: TimeInterval(millis) / 1000)
            return min(max(date, now), now.addingTimeInterval(86_400))
        }
        return RetryAfter.earliest(text, now: now)
    }

    /// `errorCode` of an error body `{"errorCode": 4040010, "errorMessage": "..."}`, nil when absent.
    static func errorCode(in body: [UInt8]) -> Int? {
        guard body.count < 4096,
            let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]
        else { return nil }
        return (object["errorCode"] as? NSNumber)?.intValue
    }

    static func percentEncoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
