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
        var i = 0
        func digits(min: Int, max: Int) -> Int64? {
            var value: Int64 = 0
            var n = 0
            while i < bytes.count, n < max, bytes[i] >= 48, bytes[i] <= 57 {
                value = value * 10 + Int64(bytes[i] - 48)
                i += 1
                n += 1
            }
            return n >= min ? value : nil
        }
        func expect(_ c: UInt8) -> Bool {
            guard i < bytes.count, bytes[i] == c else { return false }
            i += 1
            return true
        }
        guard var year = digits(min: 4, max: 7), expect(UInt8(ascii: "-")),
            let month = digits(min: 2, max: 2), expect(UInt8(ascii: "-")),
            let day = digits(min: 2, max: 2), (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        if bc { year = 1 - year }
        var secondOfDay: Int64 = 0
        var micros: Int64 = 0
        var offset: Int64 = 0
        if i < bytes.count, bytes[i] == UInt8(ascii: " ") || bytes[i] == UInt8(ascii: "T") {
            i += 1
            guard let h = digits(min: 2, max: 2), expect(UInt8(ascii: ":")),
                let m = digits(min: 2, max: 2), expect(UInt8(ascii: ":")),
                let s = digits(min: 2, max: 2), h <= 24, m < 60, s <= 60
            else { return nil }
            secondOfDay = h * 3600 + m * 60 + s
            if expect(UInt8(ascii: ".")) {
                let start = i
                guard let fraction = digits(min: 1, max: 9) else { return nil }
                var scaled = fraction
                var count = i - start
                while count < 6 {
                    scaled *= 10
                    count += 1
                }
                while count > 6 {
                    scaled /= 10
                    count -= 1
                }
                micros = scaled
                _ = digits(min: 0, max: 100)  // ignore excess precision
            }
            if i < bytes.count {
                if expect(UInt8(ascii: "Z")) {
                    offset = 0
                } else {
                    let sign: Int64
                    if expect(UInt8(ascii: "+")) {
                        sign = 1
                    } else if expect(UInt8(ascii: "-")) {
                        sign = -1
                    } else {
                        return nil
                    }
                    guard let oh = digits(min: 2, max: 2) else { return nil }
                    var total = oh * 3600
                    if expect(UInt8(ascii: ":")) {
                        guard let om = digits(min: 2, max: 2) else { return nil }
                        total += om * 60
                        if expect(UInt8(ascii: ":")) {
                            guard let os = digits(min: 2, max: 2) else { return nil }
                            total += os
                        }
                    }
                    offset = sign * total
                }
            }
        }
        guard i == bytes.count else { return nil }
        let seconds = CivilDate.days(year: year, month: month, day: day) * 86_400 + secondOfDay - offset
        return Date(timeIntervalSince1970: Double(seconds * 1_000_000 + micros) / 1_000_000)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let s = String(value)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }
}
