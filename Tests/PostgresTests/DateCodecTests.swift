import Foundation
import Testing

@testable import Postgres

/// Pure parsing/formatting of PostgreSQL's ISO timestamps: no database.
@Suite struct DateCodecTests {
    @Test(
        arguments: [
            ("2024-06-01 12:00:00+00", 1_717_243_200_000_000),
            ("2024-06-01 12:00:00.5+00", 1_717_243_200_500_000),
            ("2024-06-01 17:30:00.000001+05:30", 1_717_243_200_000_001),
            ("2024-06-01 08:29:45-03:30:15", 1_717_243_200_000_000),
            ("2024-06-01T12:00:00Z", 1_717_243_200_000_000),
            ("2024-06-01 12:00:00", 1_717_243_200_000_000),
            ("1970-01-01", 0),
            ("1969-12-31 23:59:59.999999+00", -1),
            ("0001-01-01 00:00:00+00", -62_135_596_800_000_000),
        ] as [(String, Int64)]
    )
    func parses(_ text: String, _ micros: Int64) throws {
        let date = try #require(PostgresDateCodec.parse(text))
        #expect(Int64((date.timeIntervalSince1970 * 1_000_000).rounded()) == micros)
    }

    @Test(arguments: [
        "", "2024-13-01", "2024-06-01 12:00", "2024-06-01 12:00:00+", "yesterday", "2024-06-01 12:00:00+00 junk",
    ])
    func rejects(_ text: String) {
        #expect(PostgresDateCodec.parse(text) == nil)
    }

    @Test func formatsUTCWithMicrosecondsAndRoundTrips() throws {
        let micros: Int64 = 1_717_243_200_123_456
        let date = Date(timeIntervalSince1970: Double(micros) / 1_000_000)
        let text = try #require(PostgresDateCodec.format(date))
        #expect(text == "2024-06-01 12:00:00.123456+00")
        #expect(PostgresDateCodec.parse(text) == date)
        #expect(PostgresDateCodec.format(Date(timeIntervalSince1970: -1)) == "1969-12-31 23:59:59.000000+00")
        #expect(PostgresDateCodec.format(Date(timeIntervalSince1970: .infinity)) == nil)
    }

    @Test func infinityMapsToDistantDates() {
        #expect(PostgresDateCodec.parse("infinity") == .distantFuture)
        #expect(PostgresDateCodec.parse("-infinity") == .distantPast)
    }

    @Test(
        arguments: [
            ("{}", [] as [String?]),
            ("{a,b}", ["a", "b"]),
            (#"{"a b","c\"d","e\\f",NULL,"NULL"}"#, ["a b", "c\"d", "e\\f", nil, "NULL"]),
            ("[0:1]={x,y}", ["x", "y"]),
        ] as [(String, [String?])]
    )
    func arrayLiterals(_ text: String, _ expected: [String?]) {
        #expect(PostgresArrayLiteral.parse(text) == expected)
    }

    @Test func nestedArraysAreRejected() {
        #expect(PostgresArrayLiteral.parse("{{1,2},{3,4}}") == nil)
        #expect(PostgresArrayLiteral.parse("not an array") == nil)
    }

    @Test func arrayParametersEscapeQuotesAndBackslashes() throws {
        let value = PostgresValue.textArray(["a\"b", "c\\d", nil, ""])
        #expect(try value.textRepresentation() == #"{"a\"b","c\\d",NULL,""}"#)
    }
}
