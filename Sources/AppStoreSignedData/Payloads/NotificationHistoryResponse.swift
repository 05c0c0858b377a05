/// The body of Get Notification History (`POST /inApps/v1/notifications/history`).
public struct NotificationHistoryResponse: Decodable, Sendable, Equatable {
    public var paginationToken: String?
    public var hasMore: Bool?
    public var notificationHistory: [NotificationHistoryResponseItem]

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        paginationToken = try c.string("paginationToken")
        hasMore = try c.bool("hasMore")
        notificationHistory = try c.value([NotificationHistoryResponseItem].self, "notificationHistory") ?? []
    }

    public static func decode(_ body: [UInt8]) throws(SignedDataError) -> NotificationHistoryResponse {
        try PayloadDecoder.decode(NotificationHistoryResponse.self, from: body)
    }
}
