import Foundation

/// The body of Get Notification History (`POST /inApps/v1/notifications/history`): the window, in UNIX
/// milliseconds. The same body goes with every page (Apple's `paginationToken` only works with it).
public struct NotificationHistoryRequest: Sendable, Equatable {
    public var startDate: Int64
    public var endDate: Int64

    public init(startDate: Int64, endDate: Int64) {
        self.startDate = startDate
        self.endDate = endDate
    }

    /// `{"startDate":...,"endDate":...}`.
    public var json: Data { Data("{\"startDate\":\(startDate),\"endDate\":\(endDate)}".utf8) }
}
