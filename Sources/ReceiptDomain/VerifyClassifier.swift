import Foundation

/// Classifies every verifyReceipt outcome (transport failure, HTTP status, Apple status) into a verdict.
///
/// Pure: the caller supplies what happened; this decides what to do about it. Decisions beyond
/// Apple's table (documented here because the doc leaves them open):
/// - unknown Apple statuses are **rejected** ("unknown status N"): retrying an unknown meaning hammers
///   Apple, and a rejection never changes entitlement; the nightly run asks again tomorrow;
/// - HTTP 408/429/5xx retry (honouring `Retry-After`); HTTP 413 rejects this receipt; 3xx and
///   other 4xx are configuration errors (wrong URL/request for every row); 1xx and other codes retry;
///   any 2xx is treated like 200 (the body decides);
/// - transport failures retry, except `responseTooLarge`, which rejects (it will not shrink);
/// - 21007 from sandbox / 21008 from production reject with `environment_loop` (no ping-pong);
/// - 21004 rejects this receipt: a run stops only when 21004s are systematic (its own detector);
/// - a body that parses but holds an out-of-bounds value rejects with `implausible_value`.
public enum VerifyClassifier {
    /// Classifies one exchange.
    /// - Parameters:
    ///   - transportFailure: set when no HTTP response arrived; the other inputs are then ignored.
    ///   - httpStatus: the HTTP status code.
    ///   - header: case-insensitive response header lookup (for `Retry-After`).
    ///   - body: the response body bytes.
    ///   - requestedEnvironment: the endpoint the request went to.
    ///   - now: the time the response arrived (base for `Retry-After` delta-seconds).
    public static func classify(
        transportFailure: TransportFailure?,
        httpStatus: Int,
        header: (String) -> String?,
        body: some Collection<UInt8>,
        requestedEnvironment: AppleEnvironment,
        now: Date
    ) -> VerifyVerdict {
        if let transportFailure {
            if transportFailure == .responseTooLarge { return .reject(VerdictReason(.responseTooLarge)) }
            return .retry(VerdictReason(.transport, detail: transportFailure.description), earliest: nil)
        }
        let retryAfter = header("Retry-After").flatMap { RetryAfter.earliest($0, now: now) }
        switch httpStatus {
        case 200...299:
            break
        case 429:
            return .retry(VerdictReason(.httpRateLimited, httpStatus: httpStatus), earliest: retryAfter)
        case 408:
            return .retry(VerdictReason(.httpRequestTimeout, httpStatus: httpStatus), earliest: retryAfter)
        case 500...599:
            return .retry(VerdictReason(.httpServerError, httpStatus: httpStatus), earliest: retryAfter)
        case 413:
            return .reject(VerdictReason(.httpPayloadTooLarge, httpStatus: httpStatus))
        case 300...499:
            return .configError(VerdictReason(.httpClientError, httpStatus: httpStatus))
        default:
            return .retry(VerdictReason(.httpUnexpectedStatus, httpStatus: httpStatus), earliest: retryAfter)
        }
        let response: VerifyReceiptResponse
        do {
            response = try VerifyReceiptResponse.parse(body)
        } catch  where error.code == .implausibleValue {
            // Well-formed but impossible (or unstorable) values: asking again gives the same answer.
            return .reject(VerdictReason(.implausibleValue, httpStatus: httpStatus, detail: error.description))
        } catch {
            return .retry(
                VerdictReason(.malformedResponse, httpStatus: httpStatus, detail: error.description),
                earliest: nil
            )
        }
        return classify(response: response, requestedEnvironment: requestedEnvironment)
    }

    /// Classifies a parsed response by its Apple `status` alone (HTTP 200 assumed).
    public static func classify(
        response: VerifyReceiptResponse,
        requestedEnvironment: AppleEnvironment?
    ) -> VerifyVerdict {
        let status = response.status
        switch status {
        case 0, 21006:
            return .ok(response)
        case 21000:
            return .configError(VerdictReason(.badRequest, appleStatus: status))
        case 21002:
            return .retry(VerdictReason(.receiptMalformedOrTemporary, appleStatus: status), earliest: nil)
        case 21003:
            return .reject(VerdictReason(.receiptNotAuthenticated, appleStatus: status))
        case 21004:
            // One 21004 is this receipt's problem (another app's receipt, for example); the run decides
            // whether 21004s are systematic (a wrong secret) and only then stops (docs/decision-rules.md).
            return .reject(VerdictReason(.sharedSecretMismatch, appleStatus: status))
        case 21005:
            return .retry(VerdictReason(.serverUnavailable, appleStatus: status), earliest: nil)
        case 21007:
            if requestedEnvironment == .sandbox {
                return .reject(VerdictReason(.environmentLoop, appleStatus: status, detail: "sandbox answered 21007"))
            }
            return .switchEnvironment(to: .sandbox)
        case 21008:
            if requestedEnvironment == .production {
                return .reject(
                    VerdictReason(.environmentLoop, appleStatus: status, detail: "production answered 21008")
                )
            }
            return .switchEnvironment(to: .production)
        case 21009:
            return .retry(VerdictReason(.internalDataAccess, appleStatus: status), earliest: nil)
        case 21010:
            return .reject(VerdictReason(.accountNotFound, appleStatus: status))
        case 21100...21199:
            if response.isRetryable == false {
                return .unresolved(VerdictReason(.internalDataAccessPermanent, appleStatus: status))
            }
            return .retry(VerdictReason(.internalDataAccess, appleStatus: status), earliest: nil)
        default:
            return .reject(VerdictReason(.unknownStatus, appleStatus: status))
        }
    }
}

extension VerifyClassifier {
    /// Convenience: classify with headers as a dictionary (names matched case-insensitively).
    public static func classify(
        transportFailure: TransportFailure?,
        httpStatus: Int,
        headers: [String: String],
        body: some Collection<UInt8>,
        requestedEnvironment: AppleEnvironment,
        now: Date
    ) -> VerifyVerdict {
        classify(
            transportFailure: transportFailure,
            httpStatus: httpStatus,
            header: { name in headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value },
            body: body,
            requestedEnvironment: requestedEnvironment,
            now: now
        )
    }
}
