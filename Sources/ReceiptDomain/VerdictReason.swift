/// Why a verifyReceipt exchange did not simply succeed: a stable code plus context.
///
/// `code.rawValue` is what reports and `errors.csv` store; `description` is the human text.
/// Neither ever contains the receipt or the shared secret.
public struct VerdictReason: Sendable, Equatable, CustomStringConvertible {
    /// The stable reason codes.
    public enum Code: String, Sendable, Equatable, CaseIterable {
        /// 21000: the request was not a well-formed POST (our bug).
        case badRequest = "bad_request"
        /// 21002: malformed receipt-data or a temporary Apple problem.
        case receiptMalformedOrTemporary = "receipt_malformed_or_temporary"
        /// 21003: the receipt could not be authenticated.
        case receiptNotAuthenticated = "receipt_not_authenticated"
        /// 21004: the shared secret does not match.
        case sharedSecretMismatch = "shared_secret_mismatch"
        /// 21005: receipt server temporarily unavailable.
        case serverUnavailable = "server_unavailable"
        /// 21007: sandbox receipt sent to production.
        case sandboxReceiptInProduction = "sandbox_receipt_in_production"
        /// 21008: production receipt sent to sandbox.
        case productionReceiptInSandbox = "production_receipt_in_sandbox"
        /// 21007 from sandbox or 21008 from production: the environments disagree, do not loop.
        case environmentLoop = "environment_loop"
        /// 21009 or 21100-21199 marked (or not marked) retryable.
        case internalDataAccess = "internal_data_access"
        /// 21100-21199 with `is_retryable` false.
        case internalDataAccessPermanent = "internal_data_access_permanent"
        /// 21010: account not found or deleted.
        case accountNotFound = "account_not_found"
        /// A status this project does not know.
        case unknownStatus = "unknown_status"
        /// HTTP 5xx.
        case httpServerError = "http_server_error"
        /// HTTP 429.
        case httpRateLimited = "http_rate_limited"
        /// HTTP 408.
        case httpRequestTimeout = "http_request_timeout"
        /// HTTP 413: this receipt is too large for Apple's endpoint.
        case httpPayloadTooLarge = "http_payload_too_large"
        /// Other HTTP 4xx, 3xx: the request or URL is wrong for every row.
        case httpClientError = "http_client_error"
        /// 1xx or other unexpected HTTP status.
        case httpUnexpectedStatus = "http_unexpected_status"
        /// Timeout, connection failure or reset, TLS error, other transport failure.
        case transport = "transport"
        /// The response exceeded the client's size cap.
        case responseTooLarge = "response_too_large"
        /// HTTP 200 with a body that is not a verifyReceipt response (not JSON, truncated, no status).
        case malformedResponse = "malformed_response"
        /// 21002 on every attempt of the retry budget (`VerificationAttempt` decides): the row is marked so.
        case invalidReceipt = "invalid_receipt"
        /// Status 0 but the receipt belongs to another app (bundle id mismatch).
        case bundleMismatch = "bundle_mismatch"
        /// Status 0 but the row's original_transaction_id is not in the receipt.
        case subscriptionNotInReceipt = "subscription_not_in_receipt"
        /// Status 0 but the row's transactions carry no expiry (not an auto-renewable subscription).
        case notASubscription = "not_a_subscription"
        /// A value in Apple's answer is outside what this project accepts and can store (a date before the
        /// App Store or after the ceiling, an integer beyond 32 bits, a NUL character, an over-long string).
        /// `detail` names the field. See docs/decision-rules.md, "Bounds on Apple's values".
        case implausibleValue = "implausible_value"
        /// App Store Server API 4040010 in both environments: Apple knows no such transaction.
        case transactionNotFound = "transaction_not_found"
        /// A JWS in the App Store Server API's answer failed verification (chain, OIDs, signature, bundle,
        /// environment); `detail` names the check. Nothing in that answer is believed.
        case signedDataRefused = "signed_data_refused"
        /// The row has no usable original transaction id and its stored receipt names none.
        case noOriginalTransactionId = "no_original_transaction_id"
        /// Another App Store Server API error (`detail` has Apple's `errorCode`).
        case serverAPIError = "server_api_error"
    }

    public let code: Code
    /// Apple's `status`, when the reason comes from one.
    public let appleStatus: Int?
    /// The HTTP status, when the reason comes from one.
    public let httpStatus: Int?
    /// Extra non-secret context (transport kind, parse problem, ids).
    public let detail: String?

    public init(_ code: Code, appleStatus: Int? = nil, httpStatus: Int? = nil, detail: String? = nil) {
        self.code = code
        self.appleStatus = appleStatus
        self.httpStatus = httpStatus
        self.detail = detail
    }

    public var summary: String {
        switch code {
        case .badRequest: "Apple rejected the request shape (21000): a bug in this tool"
        case .receiptMalformedOrTemporary: "receipt data malformed or Apple temporarily failing (21002)"
        case .receiptNotAuthenticated: "receipt could not be authenticated (21003)"
        case .sharedSecretMismatch: "shared secret does not match (21004)"
        case .serverUnavailable: "Apple receipt server temporarily unavailable (21005)"
        case .sandboxReceiptInProduction: "sandbox receipt sent to production (21007)"
        case .productionReceiptInSandbox: "production receipt sent to sandbox (21008)"
        case .environmentLoop: "environment switch requested back to the endpoint already asked"
        case .internalDataAccess: "Apple internal data access error"
        case .internalDataAccessPermanent: "Apple internal data access error, marked not retryable"
        case .accountNotFound: "account not found or deleted (21010)"
        case .unknownStatus: "unknown status"
        case .httpServerError: "HTTP server error"
        case .httpRateLimited: "HTTP 429 rate limited"
        case .httpRequestTimeout: "HTTP 408 request timeout"
        case .httpPayloadTooLarge: "HTTP 413: receipt too large for the endpoint"
        case .httpClientError: "HTTP client error: check the endpoint URL and request"
        case .httpUnexpectedStatus: "unexpected HTTP status"
        case .transport: "transport failure"
        case .responseTooLarge: "response larger than the client accepts"
        case .malformedResponse: "body is not a verifyReceipt response"
        case .invalidReceipt: "receipt invalid (21002 persisted after retries)"
        case .bundleMismatch: "receipt belongs to another app (bundle id mismatch)"
        case .subscriptionNotInReceipt: "the subscription is not in the receipt"
        case .notASubscription: "the transactions carry no expiry: not an auto-renewable subscription"
        case .implausibleValue: "Apple's answer holds a value outside the accepted bounds"
        case .transactionNotFound: "Apple knows no such transaction in either environment (4040010)"
        case .signedDataRefused: "signed data in Apple's answer failed verification"
        case .noOriginalTransactionId: "no original transaction id in the row or its stored receipt"
        case .serverAPIError: "App Store Server API error"
        }
    }

    public var description: String {
        var text = summary
        if code == .unknownStatus, let appleStatus { text = "unknown status \(appleStatus)" }
        var context: [String] = []
        if let appleStatus,
            code == .internalDataAccess || code == .internalDataAccessPermanent
                || code == .environmentLoop
        {
            context.append("status \(appleStatus)")
        }
        if let httpStatus { context.append("HTTP \(httpStatus)") }
        if let detail { context.append(detail) }
        if !context.isEmpty { text += " (" + context.joined(separator: ", ") + ")" }
        return text
    }
}
