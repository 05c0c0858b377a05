import Testing

@testable import AppStoreSimulator

@Suite struct SimTimeTests {
    @Test func rendersApplesThreeDateForms() {
        let ms: Int64 = 1_574_919_799_000
        #expect(SimTime.gmtString(ms) == "2019-11-28 05:43:19 Etc/GMT")
        #expect(SimTime.pacificString(ms) == "2019-11-27 21:43:19 America/Los_Angeles")
    }

    @Test func pacificFollowsDaylightSaving() {
        // 2019-07-01 12:00:00 UTC is 05:00 PDT (UTC-7).
        #expect(SimTime.pacificString(1_561_982_400_000) == "2019-07-01 05:00:00 America/Los_Angeles")
        // DST began 2026-03-08 10:00 UTC: one second before is still PST.
        let start = SimTime.parseRFC3339("2026-03-08T10:00:00Z")!
        #expect(SimTime.pacificString(start - 1000) == "2026-03-08 01:59:59 America/Los_Angeles")
        #expect(SimTime.pacificString(start) == "2026-03-08 03:00:00 America/Los_Angeles")
        // DST ended 2026-11-01 09:00 UTC.
        let end = SimTime.parseRFC3339("2026-11-01T09:00:00Z")!
        #expect(SimTime.pacificString(end - 1000) == "2026-11-01 01:59:59 America/Los_Angeles")
        #expect(SimTime.pacificString(end) == "2026-11-01 01:00:00 America/Los_Angeles")
    }

    @Test func parsesAndFormatsRFC3339() {
        #expect(SimTime.parseRFC3339("2019-11-28T05:43:19Z") == 1_574_919_799_000)
        #expect(SimTime.parseRFC3339("2019-11-28T06:43:19.250+01:00") == 1_574_919_799_250)
        #expect(SimTime.rfc3339(1_574_919_799_250) == "2019-11-28T05:43:19.250Z")
        #expect(SimTime.rfc3339(1_574_919_799_000) == "2019-11-28T05:43:19Z")
        #expect(SimTime.parseRFC3339("2019-02-30T00:00:00Z") == nil)
        #expect(SimTime.parseRFC3339("yesterday") == nil)
        #expect(SimTime.parseRFC3339("") == nil)
    }

    @Test func calendarMonthsClampTheDay() {
        let jan31 = SimTime.parseRFC3339("2026-01-31T12:00:00Z")!
        #expect(SimTime.rfc3339(SimTime.addMonths(jan31, 1)) == "2026-02-28T12:00:00Z")
        #expect(SimTime.rfc3339(SimTime.addMonths(jan31, -2)) == "2025-11-30T12:00:00Z")
        #expect(SimTime.rfc3339(SimTime.addMonths(jan31, 12)) == "2027-01-31T12:00:00Z")
    }
}
