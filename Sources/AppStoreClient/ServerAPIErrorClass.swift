import ReceiptDomain

/// How the reconciler treats an App Store Server API answer (docs/decision-rules.md, "The App Store Server
/// API"): Apple documents which error codes are worth another try.
public enum ServerAPIErrorClass: Sendable, Equatable {
    /// HTTP 200: verify and use the body.
    case success
    /// 4040010: the transaction id is not known in this environment (try the other one, once).
    case notFound
    /// 401: the key, key id, issuer id or bundle id is wrong for every request: stop the run (exit 78).
    case unauthorized
    /// 429 (4290000): too many requests on this endpoint; wait for `Retry-After`.
    case rateLimited
    /// 4040002, 4040004, 4040006, 5000001, other 5xx, transport failures: try again after a backoff.
    case retryable
    /// Anything else (400 with 4000006 invalid transaction id, 403, other 4xx): a verdict on this request.
    case failed

    /// The retryable error codes Apple documents.
    public static let retryableCodes: Set<Int> = [4_040_002, 4_040_004, 4_040_006, 5_000_001]

    public static func classify(httpStatus: Int?, errorCode: Int?, transport: TransportFailure?) -> ServerAPIErrorClass
    {
        guard let httpStatus, transport == nil else { return .retryable }
        if httpStatus == 200 { return .success }
        if httpStatus == 401 { return .unauthorized }
        if httpStatus == 429 || errorCode == 4_290_000 { return .rateLimited }
        if errorCode == 4_040_010 { return .notFound }
        if let errorCode, retryableCodes.contains(errorCode) { return .retryable }
        if httpStatus >= 500 || httpStatus == 408 { return .retryable }
        return .failed
    }
}
