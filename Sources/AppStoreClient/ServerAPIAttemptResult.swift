import Foundation
import ReceiptDomain

/// The result of one HTTP request to the App Store Server API, before the signed data in it is verified.
public struct ServerAPIAttemptResult: Sendable {
    public let environment: AppleEnvironment
    /// nil when no HTTP response arrived.
    public let httpStatus: Int?
    /// Apple's `errorCode` (4040010, 4290000, ...), when the body of an error response has one.
    public let errorCode: Int?
    public let body: [UInt8]
    /// When Apple allows the next request on this endpoint (`Retry-After`, UNIX milliseconds).
    public let retryAfter: Date?
    public let transportFailure: TransportFailure?
    public let elapsed: Duration

    public init(
        environment: AppleEnvironment,
        httpStatus: Int?,
        errorCode: Int?,
        body: [UInt8],
        retryAfter: Date?,
        transportFailure: TransportFailure?,
        elapsed: Duration
    ) {
        self.environment = environment
        self.httpStatus = httpStatus
        self.errorCode = errorCode
        self.body = body
        self.retryAfter = retryAfter
        self.transportFailure = transportFailure
        self.elapsed = elapsed
    }

    /// What to do about this answer (docs/decision-rules.md, "The App Store Server API").
    public var classification: ServerAPIErrorClass {
        ServerAPIErrorClass.classify(httpStatus: httpStatus, errorCode: errorCode, transport: transportFailure)
    }
}
