/// What `notifications import` did with a file.
public struct NotificationImportResult: Sendable, Equatable {
    /// Non-blank lines read.
    public var lines = 0
    /// Notifications stored now (`source` `import`, no run yet: the next run acts on them).
    public var stored = 0
    /// Verified notifications that were stored before (by an earlier import or notification history).
    public var alreadyStored = 0
    /// Original transaction ids named by stored notifications with no subscription row (sorted, unique).
    public var unknownSubscriptions: [String] = []
    /// Refused lines: the line number (from 1) and why, never the payload.
    public var refused: [Refusal] = []

    public struct Refusal: Sendable, Equatable, CustomStringConvertible {
        public var line: Int
        public var reason: String
        public var description: String { "line \(line): \(reason)" }
    }

    public init() {}
}
