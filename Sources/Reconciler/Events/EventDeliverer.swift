import CurlHTTP
import Dispatch
import Foundation
import Logging
import Synchronization

/// Posts the outbox's events to one receiver, one event per request, signed as Standard Webhooks says
/// (docs/events.md, "Delivery"): `webhook-id` (the event's id, the receiver's idempotency key), `webhook-timestamp`
/// and `webhook-signature`. A 2xx marks the event delivered; anything else (another status, a timeout, a refused
/// connection) is a failure tried again later (`EventDeliveryStore.RetryPolicy`). In order per subscription.
public final class EventDeliverer: Sendable {
    /// What one pass did.
    public struct Summary: Sendable, Equatable {
        public var delivered = 0
        /// Failures that will be tried again.
        public var failed = 0
        /// Events that failed their last attempt (dead, until `events replay`).
        public var dead = 0
        public init() {}
    }

    public let url: String
    let signer: WebhookSigner
    let store: EventDeliveryStore
    let http: CurlHTTPClient
    let requestTimeout: TimeInterval
    let batchSize: Int
    let logger: Logger

    /// - Throws: `UsageError` when `url` is neither HTTPS nor HTTP to this host (127.0.0.1, ::1, localhost).
    public init(
        url: String,
        signer: WebhookSigner,
        store: EventDeliveryStore,
        http: CurlHTTPClient,
        requestTimeout: TimeInterval = 10,
        batchSize: Int = 100,
        logger: Logger
    ) throws {
        try Self.check(url: url)
        self.url = url
        self.signer = signer
        self.store = store
        self.http = http
        self.requestTimeout = requestTimeout
        self.batchSize = batchSize
        self.logger = logger
    }

    /// Sends one request and waits for its end (the client answers on a Dispatch queue).
    func send(_ request: HTTPRequest) -> Result<HTTPResponse, HTTPClientError> {
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<HTTPResponse, HTTPClientError>?>(nil)
        http.execute(request) { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return outcome.withLock { $0! }
    }

    /// HTTPS, or plain HTTP to a loopback address only (a receiver on the same host).
    public static func check(url: String) throws {
        guard let parts = URLComponents(string: url), let scheme = parts.scheme?.lowercased(), let host = parts.host
        else { throw UsageError("--url \(url) is not an absolute URL") }
        let loopback = ["127.0.0.1", "::1", "[::1]", "localhost"].contains(host.lowercased())
        guard scheme == "https" || (scheme == "http" && loopback) else {
            throw UsageError("--url must be https:// (plain http:// only to this host: 127.0.0.1, ::1, localhost)")
        }
    }

    /// Delivers every event that may go now, batch after batch, until none is left to go now (later retries and
    /// events held back by a failed one wait for the next pass).
    public func deliverDue() throws -> Summary {
        var summary = Summary()
        let lease = requestTimeout * Double(batchSize) + 10
        while true {
            let batch = try store.claim(limit: batchSize, lease: lease)
            if batch.isEmpty { return summary }
            for event in batch { try deliver(event, &summary) }
        }
    }

    func deliver(_ event: EventPayload, _ summary: inout Summary) throws {
        let now = Date()
        let timestamp = Int64(now.timeIntervalSince1970)
        let body = event.body(timestamp: now)
        let request = HTTPRequest(
            url: url,
            method: .post,
            headers: [
                ("Content-Type", "application/json"), ("webhook-id", event.webhookId),
                ("webhook-timestamp", String(timestamp)),
                ("webhook-signature", signer.signature(id: event.webhookId, timestamp: timestamp, body: body)),
            ],
            body: body,
            totalTimeout: .milliseconds(Int64(requestTimeout * 1000))
        )
        let problem: String
        switch send(request) {
        case .success(let response) where (200..<300).contains(response.status):
            try store.delivered(event.id)
            summary.delivered += 1
            return
        case .success(let response):
            problem = "the receiver answered \(response.status)"
        case .failure(let error):
            problem = "no answer: \(error)"
        }
        if try store.failed(event.id, error: problem) {
            summary.dead += 1
            logger.error("event \(event.webhookId) dead after its last attempt: \(problem)")
        } else {
            summary.failed += 1
            logger.warning("event \(event.webhookId) not delivered, tried again later: \(problem)")
        }
    }
}
