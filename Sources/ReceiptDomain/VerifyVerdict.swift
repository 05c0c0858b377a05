import Foundation

/// What to do with one verifyReceipt exchange: the classification of HTTP + Apple status.
///
/// The client/pipeline acts on it: decide from `.ok`, wait and retry, resend to the other
/// endpoint (at most once each way), record a permanent rejection, or stop the run.
public enum VerifyVerdict: Sendable, Equatable {
    /// Status 0 or 21006: decide the subscription from this response.
    case ok(VerifyReceiptResponse)
    /// Transient: try again, not before `earliest` when Apple said so (Retry-After).
    case retry(VerdictReason, earliest: Date?)
    /// 21007/21008: resend to the given endpoint.
    case switchEnvironment(to: AppleEnvironment)
    /// Permanent for this receipt: record the reason, never extend entitlement.
    case reject(VerdictReason)
    /// Our configuration or code is wrong (21000, most HTTP 4xx): stop the run early.
    case configError(VerdictReason)
    /// Apple's own error marked not retryable (21100-21199 with `is_retryable` false): stop asking, but it is no
    /// verdict on the receipt, so nothing is stored and the item stays due (docs/decision-rules.md).
    case unresolved(VerdictReason)

    /// The verdict name used in reports and `explain` (`ok`, `retry`, `switch_environment`, `reject`, `config_error`,
    /// `unresolved`).
    public var name: String {
        switch self {
        case .ok: "ok"
        case .retry: "retry"
        case .switchEnvironment: "switch_environment"
        case .reject: "reject"
        case .configError: "config_error"
        case .unresolved: "unresolved"
        }
    }

    /// The reason, for every verdict but `.ok` and `.switchEnvironment`.
    public var reason: VerdictReason? {
        switch self {
        case .ok, .switchEnvironment: nil
        case .retry(let reason, _), .reject(let reason), .configError(let reason), .unresolved(let reason): reason
        }
    }

    public var isRetry: Bool {
        if case .retry = self { return true }
        return false
    }
}
