import CivilTime
import Foundation

/// Apple's field formats turned into stored values: amounts as milliunits, dates as `YYYY-MM-DD` (pure functions).
enum AppleReportValue {
    /// `-4.99` -> -4990; nil unless an optional `-`, digits, and optionally `.` and digits, with at most 3 decimals
    /// that are not zero (`0.7000` is 700) and a magnitude a bigint holds.
    static func milliunits(_ text: String) -> Int64? {
        var digits = Substring(text)
        let negative = digits.first == "-"
        if negative { digits = digits.dropFirst() }
        let parts = digits.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, !whole.isEmpty, whole.utf8.allSatisfy(isDigit), whole.count <= 15 else {
            return nil
        }
        var fraction = parts.count == 2 ? parts[1] : ""
        guard parts.count == 1 || !fraction.isEmpty, fraction.utf8.allSatisfy(isDigit) else { return nil }
        while fraction.count > 3, fraction.last == "0" { fraction = fraction.dropLast() }
        guard fraction.count <= 3, let units = Int64(whole) else { return nil }
        let thousandths = Int64(fraction.padding(toLength: 3, withPad: "0", startingAt: 0)) ?? 0
        let value = units * 1000 + thousandths
        return negative ? -value : value
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (48...57).contains(byte) }

    /// `2026-11-20` or `11/20/2026` -> `2026-11-20`; nil for anything else or a day the calendar lacks.
    static func isoDate(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes.allSatisfy({ isDigit($0) || $0 == 45 || $0 == 47 }) else { return nil }
        let year: Int64
        let month: Int64
        let day: Int64
        if bytes[4] == 45, bytes[7] == 45 {  // YYYY-MM-DD
            guard let y = number(text, 0, 4), let m = number(text, 5, 2), let d = number(text, 8, 2) else { return nil }
            (year, month, day) = (y, m, d)
        } else if bytes[2] == 47, bytes[5] == 47 {  // MM/DD/YYYY
            guard let m = number(text, 0, 2), let d = number(text, 3, 2), let y = number(text, 6, 4) else { return nil }
            (year, month, day) = (y, m, d)
        } else {
            return nil
        }
        guard year >= 1900, (1...12).contains(month), day >= 1, day <= CivilDate.daysInMonth(year: year, month: month)
        else { return nil }
        return String(format: "%04lld-%02lld-%02lld", year, month, day)
    }

    private static func number(_ text: String, _ offset: Int, _ length: Int) -> Int64? {
        let start = text.utf8.index(text.utf8.startIndex, offsetBy: offset)
        let end = text.utf8.index(start, offsetBy: length)
        let part = text.utf8[start..<end]
        guard part.allSatisfy(isDigit) else { return nil }
        return Int64(String(decoding: part, as: UTF8.self))
    }
}
