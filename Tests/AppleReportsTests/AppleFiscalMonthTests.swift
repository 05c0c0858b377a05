import Testing

@testable import AppleReports

/// Apple's fiscal calendar (docs/apple-reports.md, "Apple's fiscal calendar"): the year ends on the last Saturday of
/// September (Apple's annual report on Form 10-K), months are 5-4-4 weeks a quarter, Sunday to Saturday.
@Suite struct AppleFiscalMonthTests {
    func month(_ name: String) throws -> AppleFiscalMonth {
        try #require(AppleFiscalMonth(named: name))
    }

    func day(_ iso: String) throws -> PacificDay {
        try #require(PacificDay(iso))
    }

    @Test func fiscal2024IsThePublishedCalendar() throws {
        // The periods Apple published for fiscal 2024, October 2023 to July 2024, and the year's end (Form 10-K:
        // fiscal 2024 ended on 28 September 2024).
        let published = [
            ("2023-10", "2023-10-01", "2023-11-04"), ("2023-11", "2023-11-05", "2023-12-02"),
            ("2023-12", "2023-12-03", "2023-12-30"), ("2024-01", "2023-12-31", "2024-02-03"),
            ("2024-02", "2024-02-04", "2024-03-02"), ("2024-03", "2024-03-03", "2024-03-30"),
            ("2024-04", "2024-03-31", "2024-05-04"), ("2024-05", "2024-05-05", "2024-06-01"),
            ("2024-06", "2024-06-02", "2024-06-29"), ("2024-07", "2024-06-30", "2024-08-03"),
        ]
        for (name, start, end) in published {
            let fiscal = try month(name)
            #expect(fiscal.fiscalYear == 2024, "\(name)")
            #expect(fiscal.start.description == start, "\(name)")
            #expect(fiscal.end.description == end, "\(name)")
        }
        #expect(try month("2024-09").end.description == "2024-09-28")
        #expect(try month("2024-10").start.description == "2024-09-29")
    }

    @Test func theYearEndsOnTheLastSaturdayOfSeptember() throws {
        // Form 10-K: fiscal 2025 ended on 27 September 2025; fiscal 2023 was a 53-week year (24 September 2022 was the
        // last Saturday of September 2022, 30 September 2023 that of 2023).
        #expect(try month("2025-09").end.description == "2025-09-27")
        #expect(try month("2025-10").start.description == "2025-09-28")
        #expect(try month("2026-10").start.description == "2026-09-27")
        #expect(try month("2026-10").end.description == "2026-10-31")
        #expect(try month("2022-10").start.description == "2022-09-25")
        #expect(try month("2023-09").end.description == "2023-09-30")
        // The 53rd week: December has five weeks (the first quarter has fourteen).
        #expect(try month("2022-12").start.description == "2022-11-27")
        #expect(try month("2022-12").end.description == "2022-12-31")
        #expect(try month("2023-01").start.description == "2023-01-01")
        #expect(try month("2025-12").end.days - month("2025-12").start.days == 27)
    }

    @Test func everyDayFallsInExactlyOneMonthAndMonthsAreWholeWeeks() throws {
        // Fifteen fiscal years, day by day: months follow each other with no gap, each starts on a Sunday and has
        // four or five weeks.
        var current = try month("2019-10")
        var day = current.start
        while current.fiscalYear <= 2034 {
            #expect(AppleFiscalMonth(containing: day) == current, "\(day)")
            if day == current.end {
                let weeks = (current.end.days - current.start.days + 1) / 7
                #expect([4, 5].contains(weeks), "\(current)")
                #expect((current.start.days + 4) % 7 == 0, "\(current) starts on a Sunday")
                #expect(current.next.start == day.next, "\(current)")
                current = current.next
            }
            day = day.next
        }
    }

    @Test func namesAndTheAPIsReportDate() throws {
        // Download Finance Reports' filter[reportDate] is the fiscal year and period: 2019-04 is January 2019.
        let january = try #require(AppleFiscalMonth(reportDate: "2019-04"))
        #expect(january.name == "2019-01")
        #expect(try month("2026-10").reportDate == "2027-01")
        #expect(try month("2026-09").reportDate == "2026-12")
        #expect(AppleFiscalMonth(containing: try day("2026-11-21")).name == "2026-11")
        #expect(AppleFiscalMonth(containing: try day("2026-11-28")).name == "2026-11")
        #expect(AppleFiscalMonth(containing: try day("2026-11-29")).name == "2026-12")
        #expect(AppleFiscalMonth(named: "2026-13") == nil)
        #expect(AppleFiscalMonth(named: "26-10") == nil)
        #expect(AppleFiscalMonth(reportDate: "2027-00") == nil)
    }
}
