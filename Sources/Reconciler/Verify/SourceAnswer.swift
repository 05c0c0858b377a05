import Foundation
import ReceiptDomain

/// What came back for one request, as the pipeline needs it: for statistics, for the rate budget and for
/// reachability (the source's own view travels beside it, typed: `SourceVerification.Answer`).
public struct SourceAnswer: Sendable {
    public let request: SourceRequest
    /// The HTTP status, when a response arrived.
    public let httpStatus: Int?
    /// Apple's own status code in the body, when there is one.
    public let appleStatus: Int?
    /// Why no response arrived (timeout, reset, ...), when none did.
    public let transportFailure: String?
    /// The TLS connection was refused for a reason retrying cannot fix (an untrusted or mismatched
    /// certificate, no TLS version in common): the reason. `TLSRefusalGuard` stops the run on these.
    public let tlsRefusal: String?
    /// Apple pushed back (HTTP 429/503): the budget slows down.
    public let throttled: Bool
    /// Apple asked that nothing more be sent on this budget before this time.
    public let pauseBudgetUntil: Date?
    /// A notice worth logging once in a while (verifyReceipt's `Sunset`/`Deprecation` headers).
    public let notice: String?

    public init(
        request: SourceRequest,
        httpStatus: Int?,
        appleStatus: Int?,
        transportFailure: String?,
        tlsRefusal: String? = nil,
        throttled: Bool,
        pauseBudgetUntil: Date? = nil,
        notice: String? = nil
    ) {
        self.request = request
        self.httpStatus = httpStatus
        self.appleStatus = appleStatus
        self.transportFailure = transportFailure
        self.tlsRefusal = tlsRefusal
        self.throttled = throttled
        self.pauseBudgetUntil = pauseBudgetUntil
        self.notice = notice
    }
}
