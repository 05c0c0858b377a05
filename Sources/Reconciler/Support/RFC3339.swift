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

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` (the import's strict parser: a timestamp
    /// without a zone, or an impossible date, is nil).
    public static func parse(_ text: String) -> Date? {
        try? RFC3339Timestamp.parse(text).get()
    }
}
