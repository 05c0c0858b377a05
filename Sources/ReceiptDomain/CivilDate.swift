import Foundation

/// Gregorian calendar arithmetic in UTC (Howard Hinnant's days-from-civil algorithms) and RFC 3339 output.
///
/// Pure integer math: no `DateFormatter`, no time zones, identical on every platform.
public enum CivilDate {
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civilFromDays(_ days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// RFC 3339 UTC with `Z`, e.g. `2024-01-31T12:00:00Z`; milliseconds only when non-zero (`...:00.250Z`).
    /// Dates beyond +-10,000,000 years (not representable, never stored) print as `out-of-range`, never trap.
    public static func rfc3339(_ date: Date) -> String {
        let exact = (date.timeIntervalSince1970 * 1000).rounded()
        guard exact.isFinite, abs(exact) < 3.0e20 / 1000 else { return "out-of-range" }
        let totalMilliseconds = Int(exact)
        var seconds = totalMilliseconds / 1000
        var milliseconds = totalMilliseconds % 1000
        if milliseconds < 0 {
            milliseconds += 1000
            seconds -= 1
        }
        var days = seconds / 86_400
        var secondOfDay = seconds % 86_400
        if secondOfDay < 0 {
            secondOfDay += 86_400
            days -= 1
        }
        let (year, month, day) = civilFromDays(days)
        func pad(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
        }
        var text = "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T"
        text += "\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2))"
        if milliseconds != 0 { text += "." + pad(milliseconds, 3) }
        return text + "Z"
    }
}
