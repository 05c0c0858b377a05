import Foundation

/// Turns a `Retry-After` header into a wait, for `Backoff.nextDelay(now:earliest:)`.
///
/// Accepts the two HTTP forms (delta-seconds `120`, IMF-fixdate `Wed, 21 Oct 2015 07:28:00 GMT`)
/// and the App Store Server API's form, a UNIX time in **milliseconds** (any integer of 11 or
/// more digits: as seconds it would be over 3,000 years). A time already past means no wait.
/// Wall-clock `Date` is needed only to read absolute dates; the result is relative.
public enum RetryAfter {
    /// The wait the header asks for, or nil when the value is not understood.
    public static func delay(from value: String, now: Date) -> Duration? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            guard let number = Int64(text) else { return nil }  // absurdly long: not understood
            if text.utf8.count >= 11 {
                return until(Double(number) / 1000, now: now)
            }
            return .seconds(number)
        }
        guard let seconds = httpDateSeconds(text) else { return nil }
        return until(Double(seconds), now: now)
    }

    /// The monotonic tick before which not to retry: `nowTick` plus the header's wait.
    public static func earliestTick(from value: String, now: Date, nowTick: UInt64) -> UInt64? {
        guard let wait = delay(from: value, now: now) else { return nil }
        let (sum, overflow) = nowTick.addingReportingOverflow(wait.clampedNanoseconds)
        return overflow ? .max : sum
    }

    private static func until(_ epochSeconds: Double, now: Date) -> Duration {
        let remaining = epochSeconds - now.timeIntervalSince1970
        guard remaining > 0 else { return .zero }
        return .milliseconds(Int64(min(remaining, 1e12) * 1000))
    }

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private static let weekdays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]

    /// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) into seconds since 1970.
    static func httpDateSeconds(_ text: String) -> Int64? {
        let parts = text.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 6, parts[0].count == 4, parts[0].hasSuffix(","),
            weekdays.contains(String(parts[0].dropLast())), parts[5] == "GMT",
            let day = Int(parts[1]), parts[1].count == 2,
            let monthIndex = months.firstIndex(of: String(parts[2])),
            let year = Int(parts[3]), parts[3].count == 4
        else { return nil }
        let clock = parts[4].split(separator: ":")
        guard clock.count == 3, clock.allSatisfy({ $0.count == 2 }), let hour = Int(clock[0]),
            let minute = Int(clock[1]), let second = Int(clock[2]), hour <= 23, minute <= 59, second <= 60,
            day >= 1, day <= RFC3339Timestamp.daysInMonth(year: year, month: monthIndex + 1)
        else { return nil }
        let days = RFC3339Timestamp.daysFromCivil(year: year, month: monthIndex + 1, day: day)
        return Int64(days * 86_400 + hour * 3600 + minute * 60 + second)
    }
}
