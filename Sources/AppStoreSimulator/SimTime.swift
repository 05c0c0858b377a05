/// Calendar and date-string helpers over milliseconds since the Unix epoch.
///
/// The simulator keeps every instant as `Int64` milliseconds (what Apple's `_ms` fields carry) and
/// renders the GMT and Pacific strings by hand: it is on the hot path and must be byte-stable.
/// Pacific time follows the US rules in force since 2007 (second Sunday of March to first Sunday of November).
public enum SimTime {
    public static let second: Int64 = 1_000
    public static let minute: Int64 = 60_000
    public static let hour: Int64 = 3_600_000
    public static let day: Int64 = 86_400_000

    /// Days since 1970-01-01 for a proleptic Gregorian date (H. Hinnant's algorithm).
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The civil date of a day count since 1970-01-01.
    static func civilFromDays(_ days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (m <= 2 ? yoe + era * 400 + 1 : yoe + era * 400, m, d)
    }

    /// Midnight UTC of the day of `ms`: the start of a first reconciliation run's period at `ms` (docs/reports.md,
    /// "The period": the calendar day, UTC, of its as-of).
    static func startOfDay(_ ms: Int64) -> Int64 { floorDiv(ms, day) * day }

    static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }

    static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 2:
            let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
            return leap ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Adds calendar months, clamping the day of month (Jan 31 + 1 month = Feb 28/29), keeping the time of day.
    public static func addMonths(_ ms: Int64, _ months: Int64) -> Int64 {
        let days = floorDiv(ms, day)
        let timeOfDay = ms - days * day
        let c = civilFromDays(days)
        let total = c.year * 12 + (c.month - 1) + months
        let year = floorDiv(total, 12)
        let month = total - year * 12 + 1
        let d = min(c.day, daysInMonth(year: year, month: month))
        return daysFromCivil(year: year, month: month, day: d) * day + timeOfDay
    }

    /// Offset of America/Los_Angeles from UTC at the instant, in milliseconds (-7h in DST, else -8h).
    static func pacificOffset(_ ms: Int64) -> Int64 {
        let year = civilFromDays(floorDiv(ms, day)).year
        // Second Sunday of March, 02:00 PST = 10:00 UTC; first Sunday of November, 02:00 PDT = 09:00 UTC.
        let march1 = daysFromCivil(year: year, month: 3, day: 1)
        let march1Weekday = (march1 + 4) % 7  // 0 = Sunday; 1970-01-01 was a Thursday.
        let firstSundayMarch = march1 + (7 - march1Weekday) % 7
        let dstStart = (firstSundayMarch + 7) * day + 10 * hour
        let nov1 = daysFromCivil(year: year, month: 11, day: 1)
        let nov1Weekday = (nov1 + 4) % 7
        let dstEnd = (nov1 + (7 - nov1Weekday) % 7) * day + 9 * hour
        return (ms >= dstStart && ms < dstEnd) ? -7 * hour : -8 * hour
    }

    /// Appends `value` in decimal, zero-padded to `width` digits, in place (no temporary array).
    private static func appendPadded(_ value: Int64, width: Int, to out: inout [UInt8]) {
        let start = out.count
        out.append(contentsOf: repeatElement(48, count: width))
        var v = value
        var i = start + width - 1
        while i >= start {
            out[i] = UInt8(48 + v % 10)
            v /= 10
            i -= 1
        }
    }

    /// Appends `yyyy-MM-dd HH:mm:ss` for the wall-clock instant (already shifted to the wanted zone).
    ///
    /// The 19 bytes are reserved at once and written through one pointer: an answer writes some hundred of
    /// these, and an array access per digit (each with its own uniqueness check) was measurable.
    static func appendWallClock(_ ms: Int64, separator: UInt8, to out: inout [UInt8]) {
        let days = floorDiv(ms, day)
        let secs = (ms - days * day) / 1000
        let c = civilFromDays(days)
        let start = out.count
        out.append(contentsOf: repeatElement(0, count: 19))
        out.withUnsafeMutableBufferPointer { buffer in
            let p = buffer.baseAddress! + start
            @inline(__always) func put(_ value: Int64, width: Int, at offset: Int) {
                var v = value
                var i = offset + width - 1
                while i >= offset {
                    p[i] = UInt8(48 + v % 10)
                    v /= 10
                    i -= 1
                }
            }
            put(c.year, width: 4, at: 0)
            p[4] = 45
            put(c.month, width: 2, at: 5)
            p[7] = 45
            put(c.day, width: 2, at: 8)
            p[10] = separator
            put(secs / 3600, width: 2, at: 11)
            p[13] = 58
            put(secs / 60 % 60, width: 2, at: 14)
            p[16] = 58
            put(secs % 60, width: 2, at: 17)
        }
    }

    /// `2019-11-28 05:43:19 Etc/GMT`, Apple's plain date form.
    public static func gmtString(_ ms: Int64) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(27)
        appendGMT(ms, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `gmtString(ms)`'s bytes (the response renderer writes dates straight into its buffer).
    static func appendGMT(_ ms: Int64, to out: inout [UInt8]) {
        appendWallClock(ms, separator: 32, to: &out)
        out.append(32)
        out.append(contentsOf: gmtZone)
    }

    /// `2019-11-27 21:43:19 America/Los_Angeles`, Apple's `_pst` form (daylight saving included).
    public static func pacificString(_ ms: Int64) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(40)
        appendPacific(ms, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `pacificString(ms)`'s bytes.
    static func appendPacific(_ ms: Int64, to out: inout [UInt8]) {
        appendWallClock(ms + pacificOffset(ms), separator: 32, to: &out)
        out.append(32)
        out.append(contentsOf: pacificZone)
    }

    private static let gmtZone: [UInt8] = Array("Etc/GMT".utf8)
    private static let pacificZone: [UInt8] = Array("America/Los_Angeles".utf8)

    /// RFC 3339 in UTC with `Z`; milliseconds are written only when not zero.
    public static func rfc3339(_ ms: Int64) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(24)
        appendRFC3339(ms, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `rfc3339(ms)`'s bytes (app receipts' dates, written straight into the payload).
    static func appendRFC3339(_ ms: Int64, to out: inout [UInt8]) {
        appendWallClock(ms, separator: 84, to: &out)
        let frac = ms - floorDiv(ms, 1000) * 1000
        if frac != 0 {
            out.append(46)
            appendPadded(frac, width: 3, to: &out)
        }
        out.append(90)
    }

    /// Parses RFC 3339 (`2026-11-21T03:00:00Z`, optional fraction, `Z` or `+hh:mm`); nil when malformed.
    public static func parseRFC3339(_ text: String) -> Int64? {
        let b = Array(text.utf8)
        func num(_ from: Int, _ count: Int) -> Int64? {
            guard from + count <= b.count else { return nil }
            var v: Int64 = 0
            for i in from..<(from + count) {
                guard b[i] >= 48, b[i] <= 57 else { return nil }
                v = v * 10 + Int64(b[i] - 48)
            }
            return v
        }
        guard b.count >= 20, b[4] == 45, b[7] == 45, b[10] == 84 || b[10] == 116 || b[10] == 32,
            b[13] == 58, b[16] == 58,
            let y = num(0, 4), let mo = num(5, 2), let d = num(8, 2),
            let h = num(11, 2), let mi = num(14, 2), let s = num(17, 2),
            (1...12).contains(mo), d >= 1, d <= daysInMonth(year: y, month: mo), h < 24, mi < 60, s < 61
        else { return nil }
        var i = 19
        var fracMs: Int64 = 0
        if i < b.count, b[i] == 46 {
            i += 1
            var scale: Int64 = 100
            let start = i
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                fracMs += Int64(b[i] - 48) * scale
                scale /= 10
                i += 1
            }
            guard i > start else { return nil }
        }
        guard i < b.count else { return nil }
        var offset: Int64 = 0
        if b[i] == 90 || b[i] == 122 {
            guard i + 1 == b.count else { return nil }
        } else if b[i] == 43 || b[i] == 45 {
            guard i + 6 == b.count, b[i + 3] == 58, let oh = num(i + 1, 2), let om = num(i + 4, 2) else { return nil }
            offset = (oh * 60 + om) * minute * (b[i] == 43 ? 1 : -1)
        } else {
            return nil
        }
        let days = daysFromCivil(year: y, month: mo, day: d)
        return days * day + ((h * 60 + mi) * 60 + s) * 1000 + fracMs - offset
    }
}
