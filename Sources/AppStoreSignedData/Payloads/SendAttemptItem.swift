import Foundation

/// One delivery attempt of a notification (Get Notification History).
public struct SendAttemptItem: Decodable, Sendable, Equatable {
    public var attemptDate: Date?
    /// SUCCESS, TIMED_OUT, TLS_ISSUE, ..., UNSUCCESSFUL_HTTP_RESPONSE_CODE, OTHER.
    public var sendAttemptResult: String?

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        attemptDate = try c.date("attemptDate")
        sendAttemptResult = try c.string("sendAttemptResult")
    }
}
