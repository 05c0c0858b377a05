import AppStoreSignedData
import CurlHTTP
import Foundation
import ReceiptDomain

/// The App Store Connect API's report downloads on the project's libcurl layer (docs/apple-reports.md,
/// "Downloading"): one request per call, authenticated with a team key's short-lived ES256 token (`APITokenSigner`
/// with `APITokenScope.appStoreConnect`), answered on a global queue and classified (`AppStoreConnectAnswer`). It
/// does not retry (the caller's `AttemptPlan` decides) and never logs the token, which travels in a header only.
public final class AppStoreConnectClient: Sendable {
    /// Where and how patiently to ask.
    public struct Endpoint: Sendable {
        /// Apple's `https://api.appstoreconnect.apple.com`, or a stand-in (the simulator) in tests and demos.
        public var baseURL: String
        public var connectTimeout: Duration
        public var requestTimeout: Duration
        /// The largest report accepted (a detailed Financial report of a big app runs to megabytes).
        public var maxResponseBytes: Int

        public init(
            baseURL: String = "https://api.appstoreconnect.apple.com",
            connectTimeout: Duration = .seconds(10),
            requestTimeout: Duration = .seconds(300),
            maxResponseBytes: Int = 512 << 20
        ) {
            self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
            self.connectTimeout = connectTimeout
            self.requestTimeout = requestTimeout
            self.maxResponseBytes = maxResponseBytes
        }
    }

    /// One answer: what it means, and the requests Apple says are left this hour (`X-Rate-Limit`), when it says.
    public struct Reply: Sendable {
        public let answer: AppStoreConnectAnswer
        public let remainingThisHour: Int?

        public init(answer: AppStoreConnectAnswer, remainingThisHour: Int?) {
            self.answer = answer
            self.remainingThisHour = remainingThisHour
        }
    }

    public let endpoint: Endpoint
    private let http: CurlHTTPClient
    private let signer: APITokenSigner

    public init(http: CurlHTTPClient, endpoint: Endpoint, signer: APITokenSigner) {
        self.http = http
        self.endpoint = endpoint
        self.signer = signer
    }

    /// Downloads one report; `completion` runs on a global queue.
    public func download(
        _ report: AppStoreConnectReportRequest,
        completion: @escaping @Sendable (Reply) -> Void
    ) {
        let query = report.query.map {
            ServerAPIClient.percentEncoded($0.0) + "=" + ServerAPIClient.percentEncoded($0.1)
        }
        let request = HTTPRequest(
            url: endpoint.baseURL + report.path + "?" + query.joined(separator: "&"),
            method: .get,
            headers: [("Authorization", "Bearer " + signer.token().value), ("Accept", "application/a-gzip")],
            body: nil,
            connectTimeout: endpoint.connectTimeout,
            totalTimeout: endpoint.requestTimeout,
            maxResponseBytes: endpoint.maxResponseBytes
        )
        http.execute(request) { result in
            switch result {
            case .success(let response):
                let answer = AppStoreConnectAnswer.classify(
                    status: response.status,
                    body: [UInt8](response.body),
                    retryAfter: response.headers["Retry-After"].flatMap { ServerAPIClient.retryAfter($0, now: Date()) },
                    transportFailure: nil
                )
                let remaining = AppStoreConnectAnswer.remainingRequests(
                    inRateLimitHeader: response.headers["X-Rate-Limit"]
                )
                completion(Reply(answer: answer, remainingThisHour: remaining))
            case .failure(let error):
                let answer = AppStoreConnectAnswer.classify(
                    status: nil,
                    body: [],
                    retryAfter: nil,
                    transportFailure: VerifyReceiptClient.transportFailure(for: error)
                )
                completion(Reply(answer: answer, remainingThisHour: nil))
            }
        }
    }
}
