import CivilTime
import Foundation

/// Parses `Retry-After` values: delta-seconds or an HTTP-date (IMF-fixdate, RFC 850, asctime).
///
/// Hand-written so it is pure and locale-independent.
public enum RetryAfter {
    /// The earliest retry time for a `Retry-After` header value received at `now`, or nil when unreadable.
    /// Dates in the past yield `now`; delta-seconds are capped at one day.
    public static func earliest(_ value: String, now: Date) -> Date? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }) {
            guard let seconds = Int(text) else { return now.addingTimeInterval(86_400) }
            return now.addingTimeInterval(TimeInterval(min(seconds, 86_400)))
        }
        guard let date = parseHTTPDate(text) else { return nil }
        return max(date, now)
    }

    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// Parses the three HTTP-date formats of RFC 9110 §5.6.7 (GMT only).
    public static func parseHTTPDate(_ text: String) -> Date? {
        // Tokenise on spaces, commas, dashes and colons.
        let tokens = text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "-" || $0 == ":" }).map(String.init)
        func month(_ token: String) -> Int? { months.firstIndex(of: token.lowercased()).map { $0 + 1 } }
        var day: Int?
        var monthNumber: Int?
        var year: Int?
        var hour: Int?
        var minute: Int?
        var second: Int?
        if tokens.count == 8, tokens[7].uppercased() == "GMT" {
            // IMF-fixdate "Sun, 06 Nov 1994 08:49:37 GMT" or RFC 850 "Sunday, 06-Nov-94 08:49:37 GMT"
            day = Int(tokens[1])
            monthNumber = month(tokens[2])
            year = Int(tokens[3])
            hour = Int(tokens[4])
            minute = Int(tokens[5])
            second = Int(tokens[6])
            if let two = year, tokens[3].count == 2 { year = two < 70 ? 2000 + two : 1900 + two }
        } else if tokens.count == 7 {
            // asctime "Sun Nov  6 08:49:37 1994"
            monthNumber = month(tokens[1])
            day = Int(tokens[2])
            hour = Int(tokens[3])
            minute = Int(tokens[4])
            second = Int(tokens[5])
            year = Int(tokens[6])
        } else {
            return nil
        }
        guard let day, let monthNumber, let year, let hour, let minute, let second,
            (1...31).contains(day), (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second),
            (1900...9999).contains(year)
        else { return nil }
        let days = Int(CivilDate.days(year: Int64(year), month: Int64(monthNumber), day: Int64(day)))
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }
}
