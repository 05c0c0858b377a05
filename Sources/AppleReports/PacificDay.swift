import CivilTime
import Foundation

/// The Pacific-time calendar day of an instant: the day a Sales and Trends report (the Subscriber report among them)
/// books an event on (docs/apple-reports.md, "Days, months and signs").
///
/// Pacific time is UTC-8 (PST), and UTC-7 (PDT) from the second Sunday of March at 02:00 PST (10:00 UTC) until the
/// first Sunday of November at 02:00 PDT (09:00 UTC): the United States rule in force since 2007, encoded here so the
/// answer does not depend on the host's time-zone database. Instants before 2007 are outside what the reports cover
/// and are given the same rule.
public struct PacificDay: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Days since 1970-01-01 of the Pacific calendar day.
    public let days: Int64

    public init(days: Int64) {
        self.days = days
    }

    /// The Pacific day holding `instant`.
    public init(of instant: Date) {
        let seconds = Int64(instant.timeIntervalSince1970.rounded(.down))
        let offset: Int64 = Self.isDaylightTime(seconds) ? -7 * 3600 : -8 * 3600
        days = CivilDate.floorDivMod(seconds + offset, 86_400).quotient
    }

    /// The day named `YYYY-MM-DD`, or nil when that is not a date.
    public init?(_ iso: String) {
        let parts = iso.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            let year = Int64(parts[0]), let month = Int64(parts[1]), let day = Int64(parts[2]),
            (1...12).contains(month), day >= 1, day <= CivilDate.daysInMonth(year: year, month: month)
        else { return nil }
        days = CivilDate.days(year: year, month: month, day: day)
    }

    /// The first instant of the day in Pacific time (08:00 or 07:00 UTC).
    public var start: Date {
        let midnightUTC = days * 86_400
        // Midnight Pacific is never within a change (those are at 02:00), so the offset at 08:00 UTC decides.
        let offset: Int64 = Self.isDaylightTime(midnightUTC + 8 * 3600) ? 7 * 3600 : 8 * 3600
        return Date(timeIntervalSince1970: TimeInterval(midnightUTC + offset))
    }

    /// The day after.
    public var next: PacificDay { PacificDay(days: days + 1) }

    /// `YYYY-MM-DD`.
    public var description: String {
        let civil = CivilDate.civil(days: days)
        return String(format: "%04lld-%02lld-%02lld", civil.year, civil.month, civil.day)
    }

    public static func < (lhs: PacificDay, rhs: PacificDay) -> Bool { lhs.days < rhs.days }

    /// Whether Pacific daylight time is in force at `seconds` since 1970 (UTC).
    static func isDaylightTime(_ seconds: Int64) -> Bool {
        let year = CivilDate.civil(days: CivilDate.floorDivMod(seconds, 86_400).quotient).year
        let begins = sunday(year: year, month: 3, ordinal: 2) * 86_400 + 10 * 3600
        let ends = sunday(year: year, month: 11, ordinal: 1) * 86_400 + 9 * 3600
        return seconds >= begins && seconds < ends
    }

    /// Days since 1970 of the `ordinal`-th Sunday of a month.
    static func sunday(year: Int64, month: Int64, ordinal: Int64) -> Int64 {
        let first = CivilDate.days(year: year, month: month, day: 1)
        return first + (7 - weekday(first)) % 7 + 7 * (ordinal - 1)
    }

    /// The weekday of a day count since 1970: 0 Sunday to 6 Saturday (1970-01-01 was a Thursday).
    static func weekday(_ days: Int64) -> Int64 {
        CivilDate.floorDivMod(days + 4, 7).remainder
    }
}
