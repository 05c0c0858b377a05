import Foundation

/// A Pacific calendar day (America/Los_Angeles, with daylight saving): the day of Apple's Sales and Trends reports
/// and of its fiscal calendar (docs/apple-reports.md, "Days, months and signs"). The offsets come from Foundation's
/// time-zone database, a method independent of the rule `SimTime.pacificOffset` encodes for `_pst` dates.
struct ReportDay: Sendable, Hashable, Comparable {
    /// Days from 1970-01-01 to this civil date.
    let number: Int64

    // The zone is in every tz database; without it the simulator cannot serve reports at all.
    private static let zone = TimeZone(identifier: "America/Los_Angeles")!

    init(number: Int64) { self.number = number }

    /// nil unless `month` and `day` name a real date.
    init?(year: Int64, month: Int64, day: Int64) {
        guard (1...12).contains(month), day >= 1, day <= SimTime.daysInMonth(year: year, month: month) else {
            return nil
        }
        number = SimTime.daysFromCivil(year: year, month: month, day: day)
    }

    /// `YYYY-MM-DD`, exactly (Apple's `filter[reportDate]` for DAILY).
    init?(parsing text: Substring) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            parts.allSatisfy({ $0.allSatisfy(\.isASCII) }),
            let y = Int64(parts[0]), let m = Int64(parts[1]), let d = Int64(parts[2])
        else { return nil }
        self.init(year: y, month: m, day: d)
    }

    /// The Pacific day holding the instant `ms`.
    static func containing(_ ms: Int64) -> ReportDay {
        ReportDay(number: SimTime.floorDiv(ms + offset(at: ms), SimTime.day))
    }

    /// The zone's offset from UTC at `ms`, in milliseconds (-7 h or -8 h).
    static func offset(at ms: Int64) -> Int64 {
        Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(ms) / 1000))) * SimTime.second
    }

    /// The instant (UTC ms) this day begins in Pacific time.
    var start: Int64 { at(hour: 0) }

    /// The instant (UTC ms) the Pacific clock shows `hour`:00 on this day (not 2, which a change skips or repeats).
    /// The offset is read 8 hours later in UTC, the same side of the 02:00 clock change as the hour itself.
    func at(hour: Int64) -> Int64 {
        let wall = number * SimTime.day + hour * SimTime.hour
        return wall - Self.offset(at: wall + 8 * SimTime.hour)
    }

    /// The instant the next day begins: the end (exclusive) of this one; 23 or 25 hours after `start` on the days
    /// the clocks change.
    var end: Int64 { adding(1).start }

    func adding(_ days: Int64) -> ReportDay { ReportDay(number: number + days) }

    var civil: (year: Int64, month: Int64, day: Int64) { SimTime.civilFromDays(number) }

    /// 0 Sunday ... 6 Saturday (1970-01-01 was a Thursday).
    var weekday: Int64 { ((number + 4) % 7 + 7) % 7 }

    /// `YYYY-MM-DD`.
    var iso: String {
        let c = civil
        return "\(c.year)-" + Self.two(c.month) + "-" + Self.two(c.day)
    }

    /// `MM/DD/YYYY`, as the Financial reports write dates.
    var us: String {
        let c = civil
        return Self.two(c.month) + "/" + Self.two(c.day) + "/\(c.year)"
    }

    private static func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : String(value) }

    static func < (a: ReportDay, b: ReportDay) -> Bool { a.number < b.number }
}
