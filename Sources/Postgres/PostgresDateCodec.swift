import CivilTime
import Foundation

/// Converts between `Date` and PostgreSQL's ISO text format for timestamptz/timestamp/date,
/// without DateFormatter (not thread-safe to share, slow, locale-sensitive).
/// Precision is the server's: microseconds.
enum PostgresDateCodec {
    /// `2024-05-01 12:00:00.123456+00`, always UTC, always six fractional digits.
    /// Returns nil for dates PostgreSQL cannot store (beyond ±200,000 years, or non-finite).
    static func format(_ date: Date) -> String? {
        let interval = date.timeIntervalSince1970
        guard interval.isFinite, abs(interval) < 6_000_000_000_000 else { return nil }
        let totalMicros = Int64((interval * 1_000_000).rounded())
        let (seconds, micros) = CivilDate.floorDivMod(totalMicros, 1_000_000)
        let (days, secondOfDay) = CivilDate.floorDivMod(seconds, 86_400)
        let (year, month, day) = CivilDate.civil(days: days)
        let bc = year <= 0
        let displayYear = bc ? 1 - year : year
        var s = pad(displayYear, 4) + "-" + pad(month, 2) + "-" + pad(day, 2)
        s += " " + pad(secondOfDay / 3600, 2) + ":" + pad(secondOfDay / 60 % 60, 2) + ":" + pad(secondOfDay % 60, 2)
        s += "." + pad(micros, 6) + "+00"
        return bc ? s + " BC" : s
    }

    /// Parses the server's ISO output (DateStyle ISO): `YYYY-MM-DD[ HH:MM:SS[.ffffff]][±HH[:MM[:SS]]][ BC]`,
    /// also accepting a `T` separator and `Z`. A missing offset means UTC. `infinity` and
    /// `-infinity` map to `Date.distantFuture` / `Date.distantPast`.
    static func parse(_ text: String) -> Date? {
        switch text {
        case "infinity": return .distantFuture
        case "-infinity": return .distantPast
        default: break
        }
        var bytes = Array(text.utf8)
        var bc = false
        if bytes.count > 3, bytes.suffix(3) == Array(" BC".utf8) {
            bc = true
            bytes.removeLast(3)
        }
        var scanner = PostgresDateScanner(bytes)
        guard var year = scanner.digits(min: 4, max: 7), scanner.expect(UInt8(ascii: "-")),
            let month = scanner.digits(min: 2, max: 2), scanner.expect(UInt8(ascii: "-")),
            let day = scanner.digits(min: 2, max: 2), (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        if bc { year = 1 - year }
        var secondOfDay: Int64 = 0
        var micros: Int64 = 0
        var offset: Int64 = 0
        if scanner.expect(UInt8(ascii: " ")) || scanner.expect(UInt8(ascii: "T")) {
            guard let time = parseTime(&scanner) else { return nil }
            (secondOfDay, micros) = time
            if !scanner.isAtEnd {
                guard let seconds = parseOffset(&scanner) else { return nil }
                offset = seconds
            }
        }
        guard scanner.isAtEnd else { return nil }
        let seconds = CivilDate.days(year: year, month: month, day: day) * 86_400 + secondOfDay - offset
        return Date(timeIntervalSince1970: Double(seconds * 1_000_000 + micros) / 1_000_000)
    }

    /// `HH:MM:SS[.fraction]`, after the date and its separator: the second of the day and the microseconds.
    private static func parseTime(_ scanner: inout PostgresDateScanner) -> (secondOfDay: Int64, micros: Int64)? {
        guard let h = scanner.digits(min: 2, max: 2), scanner.expect(UInt8(ascii: ":")),
            let m = scanner.digits(min: 2, max: 2), scanner.expect(UInt8(ascii: ":")),
            let s = scanner.digits(min: 2, max: 2), h <= 24, m < 60, s <= 60
        else { return nil }
        var micros: Int64 = 0
        if scanner.expect(UInt8(ascii: ".")) {
            guard let fraction = parseMicroseconds(&scanner) else { return nil }
            micros = fraction
        }
        return (h * 3600 + m * 60 + s, micros)
    }

    /// The digits after the decimal point as microseconds: fewer than six are scaled up, more are truncated.
    private static func parseMicroseconds(_ scanner: inout PostgresDateScanner) -> Int64? {
        let start = scanner.index
        guard let fraction = scanner.digits(min: 1, max: 9) else { return nil }
        var scaled = fraction
        var count = scanner.index - start
        while count < 6 {
            scaled *= 10
            count += 1
        }
        while count > 6 {
            scaled /= 10
            count -= 1
        }
        _ = scanner.digits(min: 0, max: 100)  // ignore excess precision
        return scaled
    }

    /// The UTC offset after the time, in seconds east of UTC: `Z`, or `±HH[:MM[:SS]]`.
    private static func parseOffset(_ scanner: inout PostgresDateScanner) -> Int64? {
        if scanner.expect(UInt8(ascii: "Z")) { return 0 }
        let sign: Int64
        if scanner.expect(UInt8(ascii: "+")) {
            sign = 1
        } else if scanner.expect(UInt8(ascii: "-")) {
            sign = -1
        } else {
            return nil
        }
        guard let oh = scanner.digits(min: 2, max: 2) else { return nil }
        var total = oh * 3600
        if scanner.expect(UInt8(ascii: ":")) {
            guard let om = scanner.digits(min: 2, max: 2) else { return nil }
            total += om * 60
            if scanner.expect(UInt8(ascii: ":")) {
                guard let os = scanner.digits(min: 2, max: 2) else { return nil }
                total += os
            }
        }
        return sign * total
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let s = String(value)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }
}
