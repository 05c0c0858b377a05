import Foundation

/// RFC 3339 timestamps as the tool prints and accepts them: UTC with `Z` on output; on input `Z` or a
/// numeric offset, optional fractional seconds. A timestamp without a zone is refused (ambiguous).
public enum RFC3339 {
    /// `2026-11-21T02:30:00Z` (milliseconds only when non-zero: `2026-11-21T02:30:00.250Z`).
    public static func string(_ date: Date) -> String {
        var seconds = date.timeIntervalSince1970
        var millis = Int((seconds - seconds.rounded(.down)) * 1000 + 0.5)
        if millis >= 1000 { millis = 0; seconds += 1 }
        var t = time_t(seconds.rounded(.down))
        var parts = tm()
        gmtime_r(&t, &parts)
        let year = Int(parts.tm_year) + 1900
        if (0...9999).contains(year) {
            // Written digit by digit: String(format:) goes through CoreFoundation's formatter and was about a
            // sixth of a whole run's CPU time (reports print several timestamps per row).
            let length = millis == 0 ? 20 : 24
            return String(unsafeUninitializedCapacity: length) { buffer in
                var i = 0
                func put(_ value: Int, _ width: Int) {
                    var v = value
                    var k = width
                    while k > 0 {
                        k -= 1
                        buffer[i + k] = UInt8(truncatingIfNeeded: 48 + v % 10)
                        v /= 10
                    }
                    i += width
                }
                func put(_ byte: Character) {
                    buffer[i] = byte.asciiValue ?? 63
                    i += 1
                }
                put(year, 4); put("-"); put(Int(parts.tm_mon) + 1, 2); put("-"); put(Int(parts.tm_mday), 2)
                put("T"); put(Int(parts.tm_hour), 2); put(":"); put(Int(parts.tm_min), 2); put(":")
                put(Int(parts.tm_sec), 2)
                if millis != 0 {
                    put(".")
                    put(millis, 3)
                }
                put("Z")
                return i
            }
        }
        let base = String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
            parts.tm_hour, parts.tm_min, parts.tm_sec)
        return millis == 0 ? base + "Z" : base + String(format: ".%03dZ", millis)
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` (a space instead of `T` is accepted).
    public static func parse(_ text: String) -> Date? {
        let s = Array(text.utf8)
        func digits(_ from: Int, _ count: Int) -> Int? {
            guard from + count <= s.count else { return nil }
            var v = 0
            for i in from..<(from + count) {
                guard s[i] >= 48, s[i] <= 57 else { return nil }
                v = v * 10 + Int(s[i] - 48)
            }
            return v
        }
        guard s.count >= 20, let year = digits(0, 4), s[4] == 45, let month = digits(5, 2), s[7] == 45,
            let day = digits(8, 2), s[10] == UInt8(ascii: "T") || s[10] == UInt8(ascii: "t") || s[10] == 32,
            let hour = digits(11, 2), s[13] == 58, let minute = digits(14, 2), s[16] == 58, let second = digits(17, 2)
        else { return nil }
        guard (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        var i = 19
        var fraction = 0.0
        if i < s.count, s[i] == 46 {
            i += 1
            var scale = 0.1
            let start = i
            while i < s.count, s[i] >= 48, s[i] <= 57 {
                fraction += Double(s[i] - 48) * scale
                scale /= 10
                i += 1
            }
            guard i > start else { return nil }
        }
        guard i < s.count else { return nil }
        var offset = 0
        if s[i] == UInt8(ascii: "Z") || s[i] == UInt8(ascii: "z") {
            i += 1
        } else if s[i] == 43 || s[i] == 45 {
            let sign = s[i] == 45 ? -1 : 1
            guard let oh = digits(i + 1, 2), s.count > i + 3, s[i + 3] == 58, let om = digits(i + 4, 2), oh < 24, om < 60
            else { return nil }
            offset = sign * (oh * 3600 + om * 60)
            i += 6
        } else {
            return nil
        }
        guard i == s.count else { return nil }
        // Days in month check (leap years included).
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
        let monthDays = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard day <= monthDays[month - 1] else { return nil }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(min(second, 59))
        let epoch = timegm(&parts)
        return Date(timeIntervalSince1970: Double(epoch) - Double(offset) + fraction)
    }
}
