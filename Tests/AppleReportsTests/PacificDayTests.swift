import CivilTime
import Foundation
import Testing

@testable import AppleReports

/// Sales and Trends days are Pacific time (docs/apple-reports.md, "Days, months and signs"): the boundaries of a day
/// in winter and summer, and the two nights a year the clock changes.
@Suite struct PacificDayTests {
    func day(_ instant: String) throws -> String {
        try PacificDay(of: #require(RFC3339.parse(instant))).description
    }

    @Test func winterDaysStartAtEightUTC() throws {
        // PST, UTC-8: 2026-11-21T07:59:59Z is still the 20th in Los Angeles.
        #expect(try day("2026-11-21T07:59:59Z") == "2026-11-20")
        #expect(try day("2026-11-21T08:00:00Z") == "2026-11-21")
        #expect(try day("2026-11-21T02:30:00Z") == "2026-11-20")
        #expect(PacificDay("2026-11-21")?.start == RFC3339.parse("2026-11-21T08:00:00Z"))
    }

    @Test func summerDaysStartAtSevenUTC() throws {
        // PDT, UTC-7.
        #expect(try day("2026-07-04T06:59:59Z") == "2026-07-03")
        #expect(try day("2026-07-04T07:00:00Z") == "2026-07-04")
        #expect(PacificDay("2026-07-04")?.start == RFC3339.parse("2026-07-04T07:00:00Z"))
    }

    @Test func theClockChangesOnTheSecondSundayOfMarchAndTheFirstOfNovember() throws {
        // 2026: daylight time from Sunday 8 March 10:00 UTC to Sunday 1 November 09:00 UTC.
        #expect(PacificDay.isDaylightTime(seconds("2026-03-08T09:59:59Z")) == false)
        #expect(PacificDay.isDaylightTime(seconds("2026-03-08T10:00:00Z")))
        #expect(PacificDay.isDaylightTime(seconds("2026-11-01T08:59:59Z")))
        #expect(PacificDay.isDaylightTime(seconds("2026-11-01T09:00:00Z")) == false)
        // The day of a change is 23 or 25 hours long, and each instant in it is that day.
        #expect(try day("2026-03-08T07:59:59Z") == "2026-03-07")
        #expect(try day("2026-03-08T08:00:00Z") == "2026-03-08")
        #expect(try day("2026-03-09T06:59:59Z") == "2026-03-08")
        #expect(try day("2026-03-09T07:00:00Z") == "2026-03-09")
        #expect(try day("2026-11-01T06:59:59Z") == "2026-10-31")
        #expect(try day("2026-11-01T07:00:00Z") == "2026-11-01")
        #expect(try day("2026-11-02T07:59:59Z") == "2026-11-01")
        #expect(try day("2026-11-02T08:00:00Z") == "2026-11-02")
        // 2025: 9 March and 2 November.
        #expect(PacificDay.sunday(year: 2025, month: 3, ordinal: 2) == days("2025-03-09"))
        #expect(PacificDay.sunday(year: 2025, month: 11, ordinal: 1) == days("2025-11-02"))
    }

    @Test func aDayIsReadOnlyAsARealDate() {
        #expect(PacificDay("2026-02-29") == nil)
        #expect(PacificDay("2028-02-29")?.description == "2028-02-29")
        #expect(PacificDay("2026-1-05") == nil)
        #expect(PacificDay("20261105") == nil)
        #expect(PacificDay("2026-12-31")?.next.description == "2027-01-01")
    }

    func seconds(_ instant: String) -> Int64 {
        Int64(RFC3339.parse(instant)!.timeIntervalSince1970)
    }

    func days(_ iso: String) -> Int64 {
        PacificDay(iso)!.days
    }
}
