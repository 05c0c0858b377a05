/// A month of Apple's fiscal calendar (docs/apple-reports.md, "Apple's fiscal calendar"): the fiscal year ends on the
/// last Saturday of September; its months run Sunday to Saturday, 5-4-4 weeks per quarter, October (period 1) to
/// September (period 12); a 53-week year gives its extra week to December (period 3). Download Finance Reports names
/// a month `YYYY-MM` by fiscal year and period: `2027-01` is the October that begins on 27 September 2026.
struct FiscalMonth: Sendable, Hashable {
    /// The fiscal year (the calendar year it ends in).
    let year: Int64
    /// 1 (October) ... 12 (September).
    let period: Int64

    private static let weeks: [Int64] = [5, 4, 4, 5, 4, 4, 5, 4, 4, 5, 4, 4]

    init?(year: Int64, period: Int64) {
        guard (1...12).contains(period), (1900...9999).contains(year) else { return nil }
        self.year = year
        self.period = period
    }

    /// `YYYY-MM` (Apple's `filter[reportDate]` for the Financial reports).
    init?(reportDate text: Substring) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 4, parts[1].count == 2,
            parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
            let y = Int64(parts[0]), let p = Int64(parts[1])
        else { return nil }
        self.init(year: y, period: p)
    }

    /// The last Saturday of September of `year`: the last day of fiscal year `year`.
    static func lastDay(ofFiscalYear year: Int64) -> ReportDay {
        // September 30 always exists; step back to its Saturday (weekday 6).
        let september30 = ReportDay(number: SimTime.daysFromCivil(year: year, month: 9, day: 30))
        return september30.adding(-((september30.weekday - 6 + 7) % 7))
    }

    /// The first day (a Sunday) of fiscal year `year`.
    static func firstDay(ofFiscalYear year: Int64) -> ReportDay { lastDay(ofFiscalYear: year - 1).adding(1) }

    /// 52 or 53.
    static func weeks(inFiscalYear year: Int64) -> Int64 {
        (lastDay(ofFiscalYear: year).number - firstDay(ofFiscalYear: year).number + 1) / 7
    }

    /// Weeks in `period` of `year`: 5-4-4 per quarter, and one more in December of a 53-week year.
    private static func weeks(year: Int64, period: Int64) -> Int64 {
        weeks[Int(period - 1)] + (period == 3 && weeks(inFiscalYear: year) == 53 ? 1 : 0)
    }

    /// The month's first day, a Sunday.
    var first: ReportDay {
        let before = (1..<period).reduce(Int64(0)) { $0 + Self.weeks(year: year, period: $1) }
        return Self.firstDay(ofFiscalYear: year).adding(7 * before)
    }

    /// The month's last day, a Saturday.
    var last: ReportDay { first.adding(7 * Self.weeks(year: year, period: period) - 1) }

    /// The fiscal month holding `day`.
    static func containing(_ day: ReportDay) -> FiscalMonth {
        let civilYear = day.civil.year
        let year = day > lastDay(ofFiscalYear: civilYear) ? civilYear + 1 : civilYear
        var month = FiscalMonth(uncheckedYear: year, period: 1)
        while month.last < day { month = month.next }
        return month
    }

    var next: FiscalMonth {
        period == 12
            ? FiscalMonth(uncheckedYear: year + 1, period: 1) : FiscalMonth(uncheckedYear: year, period: period + 1)
    }

    private init(uncheckedYear year: Int64, period: Int64) {
        self.year = year
        self.period = period
    }

    /// `YYYY-MM` by fiscal year and period.
    var reportDate: String { "\(year)-" + (period < 10 ? "0\(period)" : String(period)) }
}
