import CCurl
import Dispatch
import Synchronization

/// An HTTP/1.1 and HTTP/2 client over libcurl's multi interface, driven by Dispatch on one serial
/// queue: hundreds of concurrent requests, no thread per request, keep-alive connections shared
/// through one connection cache. TLS peer and host verification is always on, with TLS 1.2 at least
/// (`Configuration.caFile` replaces the system's CAs). Redirects are not followed (a 3xx is returned as
/// is) and `Expect: 100-continue` is never sent.
public final class CurlHTTPClient: Sendable {
    public let configuration: Configuration
    private let driver: CurlMultiDriver
    private let nextTransferId = Atomic<UInt64>(1)

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        self.driver = CurlMultiDriver(configuration: configuration)
    }

    deinit {
        driver.shutdown()
    }

    /// Sends `request`; `completion` is called exactly once, on a global Dispatch queue (never on
    /// the client's own queue), with the response or the reason it failed. Callable from any thread.
    public func execute(
        _ request: HTTPRequest,
        completion: @escaping @Sendable (Result<HTTPResponse, HTTPClientError>) -> Void
    ) {
        driver.start(makeTransfer(request, completion: completion))
    }

    /// Sends `request` and waits for the complete response. Cancelling the calling task cancels
    /// the transfer, which then fails with `.cancelled`.
    public func execute(_ request: HTTPRequest) async throws(HTTPClientError) -> HTTPResponse {
        let id = nextTransferId.wrappingAdd(1, ordering: .relaxed).oldValue
        let gate = CancellationGate()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation {
                (continuation: CheckedContinuation<Result<HTTPResponse, HTTPClientError>, Never>) in
                let transfer = makeTransfer(request, id: id) { continuation.resume(returning: $0) }
                if gate.start({ driver.start(transfer) }) == false {
                    continuation.resume(
                        returning: .failure(transfer.error(.cancelled, message: "the task was cancelled"))
                    )
                }
            }
        } onCancel: {
            gate.cancel { driver.cancel(id: id) }
        }
        return try result.get()
    }

    /// Cancels all transfers in flight (their completions get `.cancelled`), closes every connection
    /// and frees libcurl's handles. Later requests fail with `.cancelled`. Blocks until done;
    /// safe to call more than once.
    public func shutdown() {
        driver.shutdown()
    }

    private func makeTransfer(
        _ request: HTTPRequest,
        id: UInt64? = nil,
        completion: @escaping @Sendable (Result<HTTPResponse, HTTPClientError>) -> Void
    ) -> CurlTransfer {
        CurlTransfer(
            id: id ?? nextTransferId.wrappingAdd(1, ordering: .relaxed).oldValue,
            request: request,
            maxResponseBytes: max(0, request.maxResponseBytes ?? configuration.maxResponseBytes),
            completion: completion
        )
    }
}
