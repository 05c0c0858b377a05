import Foundation

/// RFC 3339 timestamps as this project prints and accepts them: UTC with `Z` on output, milliseconds only
/// when non-zero; on input `Z` or a numeric offset, optional fractional seconds, and a timestamp without a
/// zone refused (ambiguous: whose midnight?).
public enum RFC3339 {
    /// Why a string is not accepted; `reason` completes "... is not an RFC 3339 timestamp" when it says more.
    public struct Failure: Error, Equatable, Sendable {
        public let reason: String?
    }

    /// `2026-11-21T02:30:00Z`, or `2026-11-21T02:30:00.250Z`. Years outside 0...9999 are written with
    /// their sign and all digits; an instant beyond +-10 million years (never stored) is `out-of-range`.
    public static func string(_ date: Date) -> String {
        let exact = (date.timeIntervalSince1970 * 1000).rounded()
        guard exact.isFinite, abs(exact) < 3.0e17 else { return "out-of-range" }
        let (seconds, milliseconds) = CivilDate.floorDivMod(Int64(exact), 1000)
        let (days, secondOfDay) = CivilDate.floorDivMod(seconds, 86_400)
        let (year, month, day) = CivilDate.civil(days: days)
        guard (0...9999).contains(year) else {
            var text = String(year) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T"
            text += pad(secondOfDay / 3600, 2) + ":" + pad(secondOfDay / 60 % 60, 2) + ":" + pad(secondOfDay % 60, 2)
            return text + (milliseconds == 0 ? "Z" : "." + pad(milliseconds, 3) + "Z")
        }
        // Written digit by digit: reports print several timestamps per row, and String(format:) was a
        // visible share of a run's CPU time.
        let length = milliseconds == 0 ? 20 : 24
        return String(unsafeUninitializedCapacity: length) { buffer in
            var i = 0
            func put(_ value: Int64, _ width: Int) {
                var v = value
                var k = width
                while k > 0 {
                    k -= 1
                    buffer[i + k] = UInt8(truncatingIfNeeded: 48 + v % 10)
                    v /= 10
                }
                i += width
            }
            func put(_ byte: UInt8) {
                buffer[i] = byte
                i += 1
            }
            put(year, 4)
            put(UInt8(ascii: "-"))
            put(month, 2)
            put(UInt8(ascii: "-"))
            put(day, 2)
            put(UInt8(ascii: "T"))
            put(secondOfDay / 3600, 2)
            put(UInt8(ascii: ":"))
            put(secondOfDay / 60 % 60, 2)
            put(UInt8(ascii: ":"))
            put(secondOfDay % 60, 2)
            if milliseconds != 0 {
                put(UInt8(ascii: "."))
                put(milliseconds, 3)
            }
            put(UInt8(ascii: "Z"))
            return i
        }
    }

    /// The same as `string(_:)`, or the empty string for nil (CSV fields).
    public static func string(_ date: Date?) -> String { date.map { string($0) } ?? "" }

    /// The UTC calendar day of `date`: `2024-05-01`.
    public static func day(_ date: Date) -> String { String(string(date).prefix(10)) }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|+-HH:MM)`; nil when it is not one.
    public static func parse(_ text: String) -> Date? { try? parseStrict(text).get() }

    /// Parses like `parse(_:)`, saying why a string is refused (a missing zone offset is named).
    public static func parseStrict(_ text: String) -> Result<Date, Failure> {
        let b = Array(text.utf8)
        var i = 0
        func digits(_ count: Int) -> Int64? {
            guard i + count <= b.count else { return nil }
            var value: Int64 = 0
            for k in i..<(i + count) {
                guard b[k] >= 0x30 && b[k] <= 0x39 else { return nil }
                value = value * 10 + Int64(b[k] - 0x30)
            }
            i += count
            return value
        }
        func expect(_ char: Character) -> Bool {
            guard i < b.count, b[i] == char.asciiValue else { return false }
            i += 1
            return true
        }
        guard let year = digits(4), expect("-"), let month = digits(2), expect("-"), let day = digits(2) else {
            return .failure(Failure(reason: nil))
        }
        guard i < b.count else { return .failure(Failure(reason: "a date without a time and zone offset")) }
        guard b[i] == UInt8(ascii: "T") || b[i] == UInt8(ascii: "t") || b[i] == UInt8(ascii: " ") else {
            return .failure(Failure(reason: nil))
        }
        i += 1
        guard let hour = digits(2), expect(":"), let minute = digits(2), expect(":"), let second = digits(2) else {
            return .failure(Failure(reason: nil))
        }
        var nanos: Int64 = 0
        if i < b.count, b[i] == UInt8(ascii: ".") {
            i += 1
            let start = i
            var scale: Int64 = 100_000_000
            while i < b.count, b[i] >= 0x30 && b[i] <= 0x39 {
                nanos += Int64(b[i] - 0x30) * scale
                scale /= 10
                i += 1
            }
            if i == start { return .failure(Failure(reason: nil)) }
        }
        guard i < b.count else {
            return .failure(Failure(reason: "no time zone offset (add Z or ±hh:mm)"))
        }
        var offsetSeconds: Int64 = 0
        switch b[i] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            i += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            let sign: Int64 = b[i] == UInt8(ascii: "-") ? -1 : 1
            i += 1
            guard let offsetHour = digits(2), expect(":"), let offsetMinute = digits(2), offsetHour <= 23,
                offsetMinute <= 59
            else { return .failure(Failure(reason: nil)) }
            offsetSeconds = sign * (offsetHour * 3600 + offsetMinute * 60)
        default:
            return .failure(Failure(reason: nil))
        }
        guard i == b.count else { return .failure(Failure(reason: nil)) }
        guard (1...12).contains(month), day >= 1, day <= CivilDate.daysInMonth(year: year, month: month),
            hour <= 23, minute <= 59, second <= 60
        else { return .failure(Failure(reason: nil)) }
        let days = CivilDate.days(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        return .success(Date(timeIntervalSince1970: Double(seconds) + Double(nanos) / 1e9))
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }
}
