import CivilTime

/// A month of Apple's fiscal calendar, the period a Financial report covers (docs/apple-reports.md, "Apple's fiscal
/// calendar").
///
/// Apple's fiscal year is the 52- or 53-week period that ends on the last Saturday of September; it starts on the
/// Sunday after. Its twelve months run Sunday to Saturday and are named after calendar months, October to September;
/// each quarter is 5-4-4 weeks (October, January, April and July have five). A 53-week year puts its extra week in
/// the first quarter, here at its end (December has five weeks): the next such year is fiscal 2028.
public struct AppleFiscalMonth: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The fiscal year: fiscal 2027 runs from 27 September 2026 to 25 September 2027.
    public let fiscalYear: Int64
    /// 1 (October) to 12 (September).
    public let period: Int64

    /// The month `period` (1...12) of `fiscalYear`, or nil when `period` is out of range.
    public init?(fiscalYear: Int64, period: Int64) {
        guard (1...12).contains(period) else { return nil }
        self.fiscalYear = fiscalYear
        self.period = period
    }

    /// The fiscal month holding `day`.
    public init(containing day: PacificDay) {
        var year = CivilDate.civil(days: day.days).year + 1
        while day.days < Self.yearStart(year) { year -= 1 }
        let weeks = (day.days - Self.yearStart(year)) / 7
        var period: Int64 = 1
        var ends = Self.weeks(year, period: 1)
        while weeks >= ends {
            period += 1
            ends += Self.weeks(year, period: period)
        }
        fiscalYear = year
        self.period = period
    }

    /// The month App Store Connect names `YYYY-MM` (the calendar month it is named after: `2026-10` is fiscal
    /// October 2026, the first month of fiscal 2027), or nil when the text is not such a month.
    public init?(named name: String) {
        guard let (year, month) = Self.yearAndMonth(name) else { return nil }
        self.init(fiscalYear: month >= 10 ? year + 1 : year, period: (month + 2) % 12 + 1)
    }

    /// The month the App Store Connect API's `filter[reportDate]` of Download Finance Reports asks for: the fiscal
    /// year and the month's number in it (`2027-01` is fiscal October 2026).
    public init?(reportDate: String) {
        guard let (year, period) = Self.yearAndMonth(reportDate) else { return nil }
        self.init(fiscalYear: year, period: period)
    }

    /// The calendar month the fiscal month is named after (10 for period 1).
    public var calendarMonth: Int64 { (period + 8) % 12 + 1 }

    /// `YYYY-MM` of the calendar month it is named after, as App Store Connect and the Financial report files name it.
    public var name: String {
        Self.text(period <= 3 ? fiscalYear - 1 : fiscalYear, calendarMonth)
    }

    /// `filter[reportDate]` for this month: fiscal year and period.
    public var reportDate: String { Self.text(fiscalYear, period) }

    /// Its first day, a Sunday.
    public var start: PacificDay {
        PacificDay(
            days: Self.yearStart(fiscalYear) + 7 * (1..<period).reduce(0) { $0 + Self.weeks(fiscalYear, period: $1) }
        )
    }

    /// Its last day, a Saturday.
    public var end: PacificDay { PacificDay(days: start.days + 7 * Self.weeks(fiscalYear, period: period) - 1) }

    /// The month after.
    public var next: AppleFiscalMonth {
        period == 12
            ? AppleFiscalMonth(fiscalYear: fiscalYear + 1, period: 1)!
            : AppleFiscalMonth(fiscalYear: fiscalYear, period: period + 1)!
    }

    public var description: String { name }

    public static func < (lhs: AppleFiscalMonth, rhs: AppleFiscalMonth) -> Bool {
        (lhs.fiscalYear, lhs.period) < (rhs.fiscalYear, rhs.period)
    }

    /// The first day of fiscal `year`: the Sunday after the last Saturday of September of the year before.
    static func yearStart(_ year: Int64) -> Int64 { lastSaturdayOfSeptember(year - 1) + 1 }

    /// Weeks in `period` of fiscal `year`: 5-4-4 a quarter, and 5 for December in a 53-week year.
    static func weeks(_ year: Int64, period: Int64) -> Int64 {
        if period % 3 == 1 { return 5 }
        let yearWeeks = (lastSaturdayOfSeptember(year) - yearStart(year) + 1) / 7
        return period == 3 && yearWeeks == 53 ? 5 : 4
    }

    static func lastSaturdayOfSeptember(_ year: Int64) -> Int64 {
        let last = CivilDate.days(year: year, month: 9, day: 30)
        return last - (PacificDay.weekday(last) + 1) % 7
    }

    static func yearAndMonth(_ text: String) -> (Int64, Int64)? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 4, parts[1].count == 2, let year = Int64(parts[0]),
            let month = Int64(parts[1]), (1...12).contains(month)
        else { return nil }
        return (year, month)
    }

    static func text(_ year: Int64, _ month: Int64) -> String {
        String(format: "%04lld-%02lld", year, month)
    }
}
