import CurlHTTP
import Dispatch
import Foundation
import ReceiptDomain

/// Apple's verifyReceipt endpoints and what every request carries.
public struct VerifyReceiptEndpoints: Sendable {
    public var production: String
    public var sandbox: String
    /// The app-specific shared secret (`password`). Sent in the body only; never logged.
    public var password: String?
    /// `exclude-old-transactions`: false keeps every renewal in `latest_receipt_info` (the ledger needs
    /// them); true returns only the latest transaction per subscription (smaller, faster responses).
    public var excludeOldTransactions: Bool
    public var connectTimeout: Duration
    public var requestTimeout: Duration
    /// Responses above this size fail as `response_too_large` (Apple's largest are a few MB).
    public var maxResponseBytes: Int

    public init(
        production: String,
        sandbox: String,
        password: String?,
        excludeOldTransactions: Bool = false,
        connectTimeout: Duration = .seconds(5),
        requestTimeout: Duration = .seconds(30),
        maxResponseBytes: Int = 32 << 20
    ) {
        self.production = production
        self.sandbox = sandbox
        self.password = password
        self.excludeOldTransactions = excludeOldTransactions
        self.connectTimeout = connectTimeout
        self.requestTimeout = requestTimeout
        self.maxResponseBytes = maxResponseBytes
    }

    public func url(for environment: AppleEnvironment) -> String {
        environment == .production ? production : sandbox
    }
}

/// The result of one HTTP request to verifyReceipt, classified.
public struct VerifyAttemptResult: Sendable {
    /// The endpoint the request went to.
    public let environment: AppleEnvironment
    public let verdict: VerifyVerdict
    /// nil when no HTTP response arrived.
    public let httpStatus: Int?
    public let transportFailure: TransportFailure?
    /// Apple's `sunset` / `deprecation` response headers, when sent (worth a log line).
    public let sunset: String?
    public let deprecation: String?
    public let elapsed: Duration

    /// Apple's `status`, when the body had one.
    public var appleStatus: Int? {
        if case .ok(let response) = verdict { return response.status }
        if case .switchEnvironment(let target) = verdict { return target == .sandbox ? 21007 : 21008 }
        return verdict.reason?.appleStatus
    }
}

/// The verifyReceipt client on the project's libcurl layer.
///
/// `send` makes exactly one HTTP request and classifies it; the nightly pipeline drives retries and the
/// environment switch itself (through `VerificationAttempt`) so that each request passes its rate limiter.
/// `verify` is the stand-alone convenience that runs the whole plan.
public final class VerifyReceiptClient: Sendable {
    public let endpoints: VerifyReceiptEndpoints
    private let http: CurlHTTPClient

    public init(http: CurlHTTPClient, endpoints: VerifyReceiptEndpoints) {
        self.http = http
        self.endpoints = endpoints
    }

    /// Sends `receipt` to `environment` once; `completion` runs on a global queue with the classified result.
    /// Parsing the response (the expensive part) happens there too, off the HTTP client's queue.
    public func send(
        receipt: String,
        to environment: AppleEnvironment,
        completion: @escaping @Sendable (VerifyAttemptResult) -> Void
    ) {
        let body = VerifyReceiptRequestBody.encode(
            receipt: receipt,
            password: endpoints.password,
            excludeOldTransactions: endpoints.excludeOldTransactions
        )
        let request = HTTPRequest(
            url: endpoints.url(for: environment),
            method: .post,
            headers: [("Content-Type", "application/json"), ("Accept", "application/json")],
            body: body,
            connectTimeout: endpoints.connectTimeout,
            totalTimeout: endpoints.requestTimeout,
            maxResponseBytes: endpoints.maxResponseBytes
        )
        let started = ContinuousClock.now
        http.execute(request) { result in
            let elapsed = ContinuousClock.now - started
            let now = Date()
            switch result {
            case .success(let response):
                let verdict = VerifyClassifier.classify(
                    transportFailure: nil,
                    httpStatus: response.status,
                    header: { response.headers[$0] },
                    body: response.body,
                    requestedEnvironment: environment,
                    now: now
                )
                completion(
                    VerifyAttemptResult(
                        environment: environment,
                        verdict: verdict,
                        httpStatus: response.status,
                        transportFailure: nil,
                        sunset: response.headers["Sunset"],
                        deprecation: response.headers["Deprecation"],
                        elapsed: elapsed
                    )
                )
            case .failure(let error):
                let failure = Self.transportFailure(for: error)
                let verdict = VerifyClassifier.classify(
                    transportFailure: failure,
                    httpStatus: 0,
                    header: { _ in nil },
                    body: EmptyCollection<UInt8>(),
                    requestedEnvironment: environment,
                    now: now
                )
                completion(
                    VerifyAttemptResult(
                        environment: environment,
                        verdict: verdict,
                        httpStatus: nil,
                        transportFailure: failure,
                        sunset: nil,
                        deprecation: nil,
                        elapsed: elapsed
                    )
                )
            }
        }
    }

    /// Maps the HTTP layer's failure kinds onto the domain's (which does not depend on CurlHTTP).
    public static func transportFailure(for error: HTTPClientError) -> TransportFailure {
        switch error.code {
        case .timeout, .connectTimeout: return .timeout
        case .connectionFailed: return .connectionFailed
        case .connectionReset: return .connectionReset
        case .tls:
            guard let failure = error.tlsFailure, failure.isRefusal else { return .tls }
            return .tlsRefused(error.message)
        case .responseTooLarge: return .responseTooLarge
        case .invalidURL, .invalidRequest, .cancelled, .other: return .other(error.code.rawValue)
        }
    }
}
