import Foundation

/// RFC 3339 timestamps in UTC with a `Z` suffix, as every report file writes them.
///
/// Milliseconds are shown only when the instant has them (Apple dates are millisecond-precise).
public enum RFC3339 {
    /// `2024-05-01T03:04:05Z`, or `2024-05-01T03:04:05.123Z` when the time has milliseconds.
    public static func string(_ date: Date) -> String {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        let whole = milliseconds.truncatingRemainder(dividingBy: 1000) == 0
        let rounded = Date(timeIntervalSince1970: milliseconds / 1000)
        if whole {
            return rounded.formatted(Date.ISO8601FormatStyle(timeZone: .gmt))
        }
        return rounded.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt))
    }

    /// The same, or the empty string for nil (CSV fields).
    public static func string(_ date: Date?) -> String { date.map { string($0) } ?? "" }

    /// The UTC calendar day: `2024-05-01`.
    public static func day(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(timeZone: .gmt).year().month().day())
    }
}
