import Foundation
import Testing

@testable import CivilTime

@Suite struct RFC3339FormatTests {
    @Test func knownInstants() {
        #expect(RFC3339.string(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00Z")
        #expect(RFC3339.string(Date(timeIntervalSince1970: 1_717_200_000)) == "2024-06-01T00:00:00Z")
        #expect(RFC3339.string(Date(timeIntervalSince1970: 1_709_164_800)) == "2024-02-29T00:00:00Z")
        #expect(RFC3339.string(Date(timeIntervalSince1970: 1_717_200_000.123)) == "2024-06-01T00:00:00.123Z")
        #expect(RFC3339.string(Date(timeIntervalSince1970: 1_717_200_000.5)) == "2024-06-01T00:00:00.500Z")
        #expect(RFC3339.string(Date(timeIntervalSince1970: -1)) == "1969-12-31T23:59:59Z")
        #expect(RFC3339.string(Date(timeIntervalSince1970: -0.25)) == "1969-12-31T23:59:59.750Z")
    }

    @Test func agreesWithFoundationOnRandomInstants() {
        var rng = SystemRandomNumberGenerator()
        let formatter = ISO8601DateFormatter()
        for _ in 0..<2000 {
            let seconds = Int64.random(in: -2_000_000_000...4_000_000_000, using: &rng)
            let date = Date(timeIntervalSince1970: TimeInterval(seconds))
            #expect(RFC3339.string(date) == formatter.string(from: date))
        }
    }

    @Test func yearsBeyondFourDigitsAndAbsurdInstantsNeverTrap() {
        let lastSecondPostgresStores = CivilDate.days(year: 294_276, month: 12, day: 31) * 86_400 + 86_399
        #expect(
            RFC3339.string(Date(timeIntervalSince1970: Double(lastSecondPostgresStores))) == "294276-12-31T23:59:59Z"
        )
        #expect(RFC3339.string(Date(timeIntervalSince1970: Double(Int64.max))) == "out-of-range")
        #expect(RFC3339.string(Date(timeIntervalSince1970: -.infinity)) == "out-of-range")
        #expect(RFC3339.string(nil) == "")
        #expect(RFC3339.day(Date(timeIntervalSince1970: 1_717_200_000)) == "2024-06-01")
    }

    @Test func civilArithmeticRoundTrips() {
        for days in stride(from: Int64(-800_000), through: 800_000, by: 997) {
            let (y, m, d) = CivilDate.civil(days: days)
            #expect(CivilDate.days(year: y, month: m, day: d) == days)
            #expect(d >= 1 && d <= CivilDate.daysInMonth(year: y, month: m))
        }
    }
}

@Suite struct RFC3339ParseTests {
    private func parse(_ text: String) -> Date? { RFC3339.parse(text) }

    @Test func acceptsZonesAndFractions() {
        #expect(parse("1970-01-01T00:00:00Z") == Date(timeIntervalSince1970: 0))
        #expect(parse("1970-01-01t01:00:00+01:00") == Date(timeIntervalSince1970: 0))
        #expect(parse("1969-12-31T19:00:00-05:00") == Date(timeIntervalSince1970: 0))
        #expect(parse("2024-02-29T23:59:59.5z") == Date(timeIntervalSince1970: 1_709_251_199.5))
        #expect(parse("2000-03-01 00:00:00Z") == Date(timeIntervalSince1970: 951_868_800))
        #expect(parse("2024-05-01T12:00:00.123456789Z") == Date(timeIntervalSince1970: 1_714_564_800.123456789))
    }

    @Test func rejectsAmbiguousOrInvalid() {
        for text in [
            "2024-05-01", "2024-05-01T12:00:00", "2023-02-29T00:00:00Z", "2024-04-31T00:00:00Z",
            "2024-05-01T24:00:00Z", "2024-05-01T12:60:00Z", "2024-05-01T12:00:00+2", "2024-05-01T12:00:00.Z",
            "2024-5-1T12:00:00Z", "2024-05-01T12:00:00Z ", "", "1714564800", "2024-05-01T12:00:00+24:00",
        ] {
            #expect(parse(text) == nil, "\(text.debugDescription)")
        }
        #expect(
            RFC3339.parseStrict("2024-05-01T12:00:00")
                == .failure(.init(reason: "no time zone offset (add Z or ±hh:mm)"))
        )
    }
}
