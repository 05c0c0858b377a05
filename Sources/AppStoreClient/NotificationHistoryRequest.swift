import Foundation

/// The body of Get Notification History (`POST /inApps/v1/notifications/history`): the window, in UNIX
/// milliseconds. The same body goes with every page (Apple's `paginationToken` only works with it).
public struct NotificationHistoryRequest: Sendable, Equatable {
    /// `{"startDate":...,"endDate":...}`.
    public let json: Data

    public init(startDate: Int64, endDate: Int64) {
        json = Data("{\"startDate\":\(startDate),\"endDate\":\(endDate)}".utf8)
    }
}
