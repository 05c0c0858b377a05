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
        production: String, sandbox: String, password: String?, excludeOldTransactions: Bool = false,
        connectTimeout: Duration = .seconds(5), requestTimeout: Duration = .seconds(30),
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
        receipt: String, to environment: AppleEnvironment,
        completion: @escaping @Sendable (VerifyAttemptResult) -> Void
    ) {
        let body = VerifyReceiptRequestBody.encode(
            receipt: receipt, password: endpoints.password, excludeOldTransactions: endpoints.excludeOldTransactions)
        let request = HTTPRequest(
            url: endpoints.url(for: environment), method: .post,
            headers: [("Content-Type", "application/json"), ("Accept", "application/json")],
            body: body, connectTimeout: endpoints.connectTimeout, totalTimeout: endpoints.requestTimeout,
            maxResponseBytes: endpoints.maxResponseBytes)
        let started = ContinuousClock.now
        http.execute(request) { result in
            let elapsed = ContinuousClock.now - started
            let now = Date()
            switch result {
            case .success(let response):
                let verdict = VerifyClassifier.classify(
                    transportFailure: nil, httpStatus: response.status, header: { response.headers[$0] },
                    body: response.body, requestedEnvironment: environment, now: now)
                completion(
                    VerifyAttemptResult(
                        environment: environment, verdict: verdict, httpStatus: response.status, transportFailure: nil,
                        sunset: response.headers["Sunset"], deprecation: response.headers["Deprecation"],
                        elapsed: elapsed))
            case .failure(let error):
                let failure = Self.transportFailure(for: error)
                let verdict = VerifyClassifier.classify(
                    transportFailure: failure, httpStatus: 0, header: { _ in nil }, body: EmptyCollection<UInt8>(),
                    requestedEnvironment: environment, now: now)
                completion(
                    VerifyAttemptResult(
                        environment: environment, verdict: verdict, httpStatus: nil, transportFailure: failure,
                        sunset: nil, deprecation: nil, elapsed: elapsed))
            }
        }
    }

    /// The whole plan for one receipt, with a simple delay between retries (no shared rate limiter):
    /// production first, at most one environment switch, at most `maxAttempts` retryable failures.
    /// - Parameter retryDelay: the wait before retry number `failures` (1-based), given Apple's earliest time
    ///   (default: `untilEarliest`, no wait unless Apple sent `Retry-After`).
    public func verify(
        receipt: String, maxAttempts: Int = 3,
        retryDelay: @escaping @Sendable (_ failures: Int, _ earliest: Date?) -> Duration = VerifyReceiptClient.untilEarliest,
        completion: @escaping @Sendable (VerifyOutcome) -> Void
    ) {
        var plan = VerificationAttempt(maxAttempts: maxAttempts)
        let first = plan.start()
        drive(receipt: receipt, plan: plan, step: first, history: [], retryDelay: retryDelay, completion: completion)
    }

    /// Async form of `verify`.
    public func verify(
        receipt: String, maxAttempts: Int = 3,
        retryDelay: @escaping @Sendable (_ failures: Int, _ earliest: Date?) -> Duration = VerifyReceiptClient.untilEarliest
    ) async -> VerifyOutcome {
        await withCheckedContinuation { continuation in
            verify(receipt: receipt, maxAttempts: maxAttempts, retryDelay: retryDelay) { continuation.resume(returning: $0) }
        }
    }

    /// The default retry delay: none, except that Apple's `Retry-After` is honoured (up to a minute;
    /// a longer wait is the caller's decision, through its own `retryDelay`).
    public static func untilEarliest(_ failures: Int, _ earliest: Date?) -> Duration {
        guard let earliest else { return .zero }
        let seconds = min(60, max(0, earliest.timeIntervalSinceNow))
        return .milliseconds(Int64((seconds * 1000).rounded(.up)))
    }

    private func drive(
        receipt: String, plan: VerificationAttempt, step: VerificationAttempt.Step, history: [VerifyAttemptResult],
        retryDelay: @escaping @Sendable (Int, Date?) -> Duration,
        completion: @escaping @Sendable (VerifyOutcome) -> Void
    ) {
        switch step {
        case .finished(let final):
            completion(VerifyOutcome(final: final, attempts: history))
        case .send(let environment):
            send(receipt: receipt, to: environment) { result in
                var plan = plan
                let next = plan.next(after: result.verdict)
                self.drive(
                    receipt: receipt, plan: plan, step: next, history: history + [result], retryDelay: retryDelay,
                    completion: completion)
            }
        case .retry(let environment, let failures, let earliest, _):
            let delay = retryDelay(failures, earliest)
            let nanos = max(0, delay.components.seconds * 1_000_000_000 + delay.components.attoseconds / 1_000_000_000)
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(nanos))) {
                self.drive(
                    receipt: receipt, plan: plan, step: .send(environment), history: history, retryDelay: retryDelay,
                    completion: completion)
            }
        }
    }

    /// Maps the HTTP layer's failure kinds onto the domain's (which does not depend on CurlHTTP).
    public static func transportFailure(for error: HTTPClientError) -> TransportFailure {
        switch error.code {
        case .timeout, .connectTimeout: return .timeout
        case .connectionFailed: return .connectionFailed
        case .connectionReset: return .connectionReset
        case .tls: return .tls
        case .responseTooLarge: return .responseTooLarge
        case .invalidURL, .invalidRequest, .cancelled, .other: return .other(error.code.rawValue)
        }
    }
}

/// How a stand-alone `verify` ended, with every request it made.
public struct VerifyOutcome: Sendable {
    public let final: VerificationAttempt.Final
    public let attempts: [VerifyAttemptResult]
}
