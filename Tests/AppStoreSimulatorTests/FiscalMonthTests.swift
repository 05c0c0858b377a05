import Testing

@testable import AppStoreSimulator

/// The simulator's own fiscal calendar (docs/apple-reports.md, "Apple's fiscal calendar") against what Apple
/// published: year ends, the fiscal 2024 months, the 53-week fiscal 2023, and `filter[reportDate]` names.
@Suite struct FiscalMonthTests {
    func day(_ text: String) -> ReportDay { ReportDay(parsing: text[...])! }

    @Test func fiscalYearsEndOnTheLastSaturdayOfSeptember() {
        #expect(FiscalMonth.firstDay(ofFiscalYear: 2024) == day("2023-10-01"))
        #expect(FiscalMonth.lastDay(ofFiscalYear: 2024) == day("2024-09-28"))
        #expect(FiscalMonth.lastDay(ofFiscalYear: 2025) == day("2025-09-27"))
        #expect(FiscalMonth.lastDay(ofFiscalYear: 2026) == day("2026-09-26"))
        #expect(FiscalMonth.firstDay(ofFiscalYear: 2027) == day("2026-09-27"))
        #expect(FiscalMonth.weeks(inFiscalYear: 2023) == 53)
        #expect(FiscalMonth.weeks(inFiscalYear: 2024) == 52)
        #expect(FiscalMonth.weeks(inFiscalYear: 2028) == 53)
    }

    @Test func fiscal2024MonthsAreApplesPublishedPeriods() throws {
        let expected: [(Int64, String, String)] = [
            (1, "2023-10-01", "2023-11-04"), (2, "2023-11-05", "2023-12-02"), (3, "2023-12-03", "2023-12-30"),
            (4, "2023-12-31", "2024-02-03"), (7, "2024-03-31", "2024-05-04"), (10, "2024-06-30", "2024-08-03"),
            (12, "2024-09-01", "2024-09-28"),
        ]
        for (period, first, last) in expected {
            let month = try #require(FiscalMonth(year: 2024, period: period))
            #expect(month.first == day(first), "period \(period)")
            #expect(month.last == day(last), "period \(period)")
        }
        // 53 weeks: December 2022 (fiscal 2023 period 3) has the extra week.
        let december = try #require(FiscalMonth(year: 2023, period: 3))
        #expect(december.first == day("2022-11-27") && december.last == day("2022-12-31"))
    }

    @Test func reportDateNamesTheFiscalYearAndPeriod() throws {
        let october = try #require(FiscalMonth(reportDate: "2027-01"))
        #expect(october.first == day("2026-09-27") && october.last == day("2026-10-31"))
        #expect(FiscalMonth.containing(day("2026-09-26")).reportDate == "2026-12")
        #expect(FiscalMonth.containing(day("2026-09-27")).reportDate == "2027-01")
        #expect(FiscalMonth.containing(day("2026-11-21")).reportDate == "2027-02")
        #expect(FiscalMonth(reportDate: "2027-13") == nil && FiscalMonth(reportDate: "2027-1") == nil)
        #expect(FiscalMonth(reportDate: "2026-10-01") == nil)
    }

    @Test func monthsTileTheCalendarSundayToSaturday() {
        var month = FiscalMonth.containing(day("2021-10-01"))
        var expectedFirst = month.first
        while month.year < 2030 {
            #expect(month.first == expectedFirst)
            #expect(month.first.weekday == 0 && month.last.weekday == 6, "\(month.reportDate)")
            #expect(FiscalMonth.containing(month.first) == month && FiscalMonth.containing(month.last) == month)
            expectedFirst = month.last.adding(1)
            month = month.next
        }
    }
}
