/// One notification in Get Notification History: the signed payload Apple sent and each attempt.
public struct NotificationHistoryResponseItem: Decodable, Sendable, Equatable {
    public var signedPayload: String?
    public var sendAttempts: [SendAttemptItem]

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        signedPayload = try c.string("signedPayload")
        sendAttempts = try c.value([SendAttemptItem].self, "sendAttempts") ?? []
    }
}
