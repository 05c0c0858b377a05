import Foundation

/// A strict RFC 3339 `date-time` parser (`2024-05-01T12:00:00Z`, `2024-05-01T14:00:00.250+02:00`).
///
/// Import files come from other systems; a timestamp without a zone offset is ambiguous
/// (whose midnight?) and is rejected rather than guessed. Pure and locale-independent:
/// no `DateFormatter`, no `Calendar`.
enum RFC3339Timestamp {
    /// Why a string is not accepted; `reason` completes "… is not an RFC 3339 timestamp".
    struct Failure: Error, Equatable {
        let reason: String?
    }

    /// Parses `text`, returning the instant or why it was refused.
    static func parse(_ text: String) -> Result<Date, Failure> {
        let b = Array(text.utf8)
        var i = 0
        func digits(_ count: Int) -> Int? {
            guard i + count <= b.count else { return nil }
            var value = 0
            for k in i..<(i + count) {
                guard b[k] >= 0x30 && b[k] <= 0x39 else { return nil }
                value = value * 10 + Int(b[k] - 0x30)
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
        var nanos = 0
        if i < b.count, b[i] == UInt8(ascii: ".") {
            i += 1
            let start = i
            var scale = 100_000_000
            while i < b.count, b[i] >= 0x30 && b[i] <= 0x39 {
                nanos += Int(b[i] - 0x30) * scale
                scale /= 10
                i += 1
            }
            if i == start { return .failure(Failure(reason: nil)) }
        }
        guard i < b.count else {
            return .failure(Failure(reason: "no time zone offset (add Z or ±hh:mm)"))
        }
        var offsetSeconds = 0
        switch b[i] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            i += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            let sign = b[i] == UInt8(ascii: "-") ? -1 : 1
            i += 1
            guard let offsetHour = digits(2), expect(":"), let offsetMinute = digits(2), offsetHour <= 23,
                offsetMinute <= 59
            else { return .failure(Failure(reason: nil)) }
            offsetSeconds = sign * (offsetHour * 3600 + offsetMinute * 60)
        default:
            return .failure(Failure(reason: nil))
        }
        guard i == b.count else { return .failure(Failure(reason: nil)) }
        guard (1...12).contains(month), day >= 1, day <= daysInMonth(year: year, month: month),
            hour <= 23, minute <= 59, second <= 60
        else { return .failure(Failure(reason: nil)) }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        return .success(Date(timeIntervalSince1970: Double(seconds) + Double(nanos) / 1e9))
    }

    static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 in the proleptic Gregorian calendar (H. Hinnant's algorithm).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
