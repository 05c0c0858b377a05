import Foundation
import Testing

@testable import AppStoreSimulator

/// Pacific days of the report downloads (docs/apple-reports.md, "Days, months and signs"): Foundation's time zones,
/// the clock changes, and agreement with the rule `SimTime.pacificOffset` encodes for verifyReceipt's `_pst` dates.
@Suite struct ReportDayTests {
    func ms(_ text: String) -> Int64 { SimTime.parseRFC3339(text)! }

    @Test func anEventAt0730UTCInWinterBelongsToThePreviousPacificDay() {
        #expect(ReportDay.containing(ms("2026-11-21T07:30:00Z")).iso == "2026-11-20")
        #expect(ReportDay.containing(ms("2026-11-21T08:00:00Z")).iso == "2026-11-21")
        // In summer (UTC-7) 07:30 UTC is already the same day.
        #expect(ReportDay.containing(ms("2026-07-21T07:30:00Z")).iso == "2026-07-21")
        #expect(ReportDay.containing(ms("2026-07-21T06:59:59Z")).iso == "2026-07-20")
    }

    @Test func clockChangeDaysHave23And25Hours() throws {
        let spring = try #require(ReportDay(parsing: "2026-03-08"))
        #expect(spring.start == ms("2026-03-08T08:00:00Z") && spring.end == ms("2026-03-09T07:00:00Z"))
        let fall = try #require(ReportDay(parsing: "2026-11-01"))
        #expect(fall.start == ms("2026-11-01T07:00:00Z") && fall.end == ms("2026-11-02T08:00:00Z"))
        #expect(fall.adding(1).at(hour: 8) == ms("2026-11-02T16:00:00Z"))
        #expect(spring.at(hour: 8) == ms("2026-03-08T15:00:00Z"))
    }

    @Test func foundationAgreesWithTheEncodedRuleEveryHourFrom2020To2030() {
        var t = ms("2020-01-01T00:00:00Z")
        var disagreements = 0
        while t < ms("2030-01-01T00:00:00Z") {
            if ReportDay.offset(at: t) != SimTime.pacificOffset(t) { disagreements += 1 }
            t += SimTime.hour
        }
        #expect(disagreements == 0)
    }

    @Test func onlyRealDatesParse() {
        #expect(ReportDay(parsing: "2026-02-29") == nil)
        #expect(ReportDay(parsing: "2028-02-29")?.iso == "2028-02-29")
        #expect(ReportDay(parsing: "2026-1-05") == nil && ReportDay(parsing: "20261105") == nil)
        #expect(ReportDay(parsing: "2026-11-05")?.us == "11/05/2026")
    }
}
