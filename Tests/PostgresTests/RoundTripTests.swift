import Foundation
import TestSupport
import Testing

@testable import Postgres

/// Values go through real parameters and come back unchanged.
@Suite struct RoundTripTests {
    let conn: PostgresConnection

    init() throws {
        conn = try TestDatabase.make().connect()
    }

    @Test(arguments: [
        "plain", "", "it's a 'quote'", "double \"quote\"", #"back\slash \\ \x00 \n"#, "semi; DROP TABLE t; --",
        "$1 $2 ?", "日本語テキスト", "emoji 👩‍👩‍👧‍👦🇫🇷", "controls \u{01}\u{07}\u{1b}\t\r\n\u{7f}", "{a,\"b\"}\\",
        "NULL",
    ])
    func hostileStringsRoundTrip(_ value: String) throws {
        let row = try #require(try conn.queryFirst("SELECT $1::text AS v, length($1::text) AS n", [value]))
        #expect(try row.decode("v", as: String.self) == value)
        #expect(try row.decode("n", as: Int.self) == value.unicodeScalars.count)  // length() counts code points
    }

    @Test func hugeStringRoundTripsThroughATable() throws {
        let big = String(repeating: "receipt-✓-", count: 30_000)  // 300,000 characters
        #expect(big.count == 300_000)
        try conn.execute("CREATE TABLE blobs (id int PRIMARY KEY, body text NOT NULL)")
        let inserted = try conn.execute("INSERT INTO blobs VALUES ($1, $2)", [1, big])
        #expect(inserted.rowsAffected == 1)
        let back = try #require(try conn.queryFirst("SELECT body FROM blobs WHERE id = $1", [1]))
        #expect(try back.decode("body", as: String.self) == big)
    }

    @Test func nullsDecodeAsOptionalsAndFailAsNonOptionals() throws {
        let missing: String? = nil
        let row = try #require(
            try conn.queryFirst("SELECT $1::text AS a, $2::int AS b, NULL::timestamptz AS c", [missing, nil])
        )
        #expect(try row.decode("a", as: String?.self) == nil)
        #expect(try row.decode("b", as: Int?.self) == nil)
        #expect(try row.decode("c", as: Date?.self) == nil)
        #expect(row["a"] == nil)
        let error = #expect(throws: PostgresError.self) { try row.decode("b", as: Int.self) }
        #expect(error?.code == .decoding)
        #expect(error?.description.contains("\"b\"") == true)
    }

    @Test func timestampsRoundTripInUTCWithMicroseconds() throws {
        let micros: Int64 = 1_717_243_200_123_456  // 2024-06-01 12:00:00.123456 UTC
        let date = Date(timeIntervalSince1970: Double(micros) / 1_000_000)
        let row = try #require(try conn.queryFirst("SELECT $1::timestamptz AS t, $1::timestamptz::text AS s", [date]))
        let back = try row.decode("t", as: Date.self)
        #expect(Int64((back.timeIntervalSince1970 * 1_000_000).rounded()) == micros)
        #expect(back == date)
        #expect(try row.decode("s", as: String.self) == "2024-06-01 12:00:00.123456+00")
    }

    @Test func nonUTCSessionTimeZoneDecodesToTheSameInstant() throws {
        let micros: Int64 = 1_700_000_000_000_001
        let date = Date(timeIntervalSince1970: Double(micros) / 1_000_000)
        try conn.execute("CREATE TABLE events (at timestamptz NOT NULL)")
        try conn.execute("INSERT INTO events VALUES ($1)", [date])
        for zone in ["Asia/Kolkata", "America/St_Johns", "Pacific/Chatham", "Europe/Paris"] {
            try conn.execute("SELECT set_config('TimeZone', $1, false)", [zone])
            let row = try #require(try conn.queryFirst("SELECT at, at::text AS s FROM events"))
            let text = try row.decode("s", as: String.self)
            #expect(!text.hasSuffix("+00"), "\(zone) should print a non-UTC offset: \(text)")
            let back = try row.decode("at", as: Date.self)
            #expect(Int64((back.timeIntervalSince1970 * 1_000_000).rounded()) == micros, "zone \(zone): \(text)")
        }
        // Comparisons on the server use the exact bound instant.
        let count = try conn.queryFirst("SELECT count(*) AS n FROM events WHERE at = $1", [date])
        #expect(try count?.decode("n", as: Int.self) == 1)
    }

    @Test func timestampWithoutTimeZoneAndDateDecodeAsUTC() throws {
        let row = try #require(
            try conn.queryFirst("SELECT '2024-02-29 23:59:59.5'::timestamp AS ts, '2024-03-01'::date AS d")
        )
        #expect(try row.decode("ts", as: Date.self).timeIntervalSince1970 == 1_709_251_199.5)
        #expect(try row.decode("d", as: Date.self).timeIntervalSince1970 == 1_709_251_200)
    }

    @Test func numbersAndBooleansDecode() throws {
        let row = try #require(
            try conn.queryFirst(
                "SELECT 9223372036854775807::bigint AS big, -42::int AS i, true AS t, false AS f, "
                    + "0.1::float8 AS d, 12345678901234567890.123456789::numeric AS n, $1::float8 AS p, $2::numeric AS q",
                [Double.pi, Decimal(string: "0.000001")]
            )
        )
        #expect(try row.decode("big", as: Int64.self) == Int64.max)
        #expect(try row.decode("i", as: Int.self) == -42)
        #expect(try row.decode("t", as: Bool.self) == true)
        #expect(try row.decode("f", as: Bool.self) == false)
        #expect(try row.decode("d", as: Double.self) == 0.1)
        #expect(try row.decode("p", as: Double.self) == Double.pi)
        #expect(try row.decode("n", as: Decimal.self) == Decimal(string: "12345678901234567890.123456789"))
        #expect(try row.decode("q", as: Decimal.self) == Decimal(string: "0.000001"))
        // By index too.
        #expect(try row.decode(1, as: Int.self) == -42)
        #expect(row.columnNames.first == "big")
    }

    @Test func wrongTypeDecodingThrowsNamingTheColumn() throws {
        let row = try #require(try conn.queryFirst("SELECT 'abc'::text AS label"))
        let error = #expect(throws: PostgresError.self) { try row.decode("label", as: Int.self) }
        #expect(error?.description.contains("label") == true)
        #expect(throws: PostgresError.self) { try row.decode("nope", as: String.self) }
        #expect(throws: PostgresError.self) { try row.decode(7, as: String.self) }
    }

    @Test func arraysBindForBatchWrites() throws {
        try conn.execute("CREATE TABLE subs (id text PRIMARY KEY, n bigint)")
        let ids = ["a", "b'c", "d\"e", "f\\g", "h,i", "NULL", "{}", "x y"]
        let numbers: [Int64] = [1, 2, 3, 4, 5, 6, 7, 8]
        let inserted = try conn.execute(
            "INSERT INTO subs SELECT * FROM unnest($1::text[], $2::bigint[])",
            [ids, numbers]
        )
        #expect(inserted.rowsAffected == ids.count)
        let rows = try conn.query("SELECT id, n FROM subs WHERE id = ANY($1) ORDER BY n", [ids])
        #expect(try rows.map { try $0.decode("id", as: String.self) } == ids)
        let agg = try #require(
            try conn.queryFirst("SELECT array_agg(id ORDER BY n) AS ids, array_agg(n ORDER BY n) AS ns FROM subs")
        )
        #expect(try agg.decode("ids", as: [String].self) == ids)
        #expect(try agg.decode("ns", as: [Int64].self) == numbers)
        let withNull = try #require(
            try conn.queryFirst("SELECT $1::text[] AS a", [PostgresValue.textArray(["x", nil])])
        )
        #expect(try withNull.decode("a", as: [String?].self) == ["x", nil])
    }

    /// Text arrays are sent in the binary array format (`PostgresValue.sendsBinary`): what the statement receives is
    /// the same array, whatever its elements (quotes, backslashes, commas, braces, the word NULL, UTF-8, a NULL, a
    /// 100 KB receipt-sized element), empty or all NULL, through `query` and `forEachRow` alike.
    @Test func textArraysTravelInBinaryAndArriveUnchanged() throws {
        let big = String(repeating: "QUJD", count: 25_000)
        let cases: [[String?]] = [
            ["a", "b'c", "d\"e", "f\\g", "h,i", "NULL", "{}", " x y ", "é€😀", "", nil, big],
            [], [nil, nil], [big],
        ]
        for elements in cases {
            #expect(PostgresValue.textArray(elements).sendsBinary)
            let row = try #require(
                try conn.queryFirst(
                    """
                    SELECT $1::text[] AS a, cardinality($1::text[]) AS n, array_lower($1::text[], 1) AS lower,
                           (SELECT count(*) FROM unnest($1::text[]) AS e WHERE e IS NULL) AS nulls
                    """,
                    [PostgresValue.textArray(elements)]
                )
            )
            #expect(try row.decode("a", as: [String?].self) == elements)
            #expect(try row.decode("n", as: Int.self) == elements.count)
            #expect(try row.decode("lower", as: Int?.self) == (elements.isEmpty ? nil : 1))
            #expect(try row.decode("nulls", as: Int.self) == elements.filter { $0 == nil }.count)
            var streamed: [String?] = []
            try conn.forEachRow(
                "SELECT e FROM unnest($1::text[]) WITH ORDINALITY AS u(e, k) ORDER BY k",
                [
                    PostgresValue.textArray(elements)
                ]
            ) { streamed.append(try $0.decode("e", as: String?.self)) }
            #expect(streamed == elements)
        }
        // A bigint array stays text (only text arrays go binary).
        #expect(!PostgresValue.int64Array([1, nil]).sendsBinary)
    }

    @Test func byteaRoundTrips() throws {
        let bytes = Data([0, 1, 2, 0xfe, 0xff, 0x5c, 0x27])
        let row = try #require(try conn.queryFirst("SELECT $1::bytea AS b", [bytes]))
        #expect(try row.decode("b", as: Data.self) == bytes)
    }

    @Test func nulCharacterInAParameterIsAnEncodingError() throws {
        let error = #expect(throws: PostgresError.self) { try conn.execute("SELECT $1::text", ["a\u{0}b"]) }
        #expect(error?.code == .encoding)
        // Also inside an array parameter, named by its position.
        let inArray = #expect(throws: PostgresError.self) {
            try conn.execute("SELECT $1::int, $2::text[]", [1, ["fine", "x\u{0}y"]])
        }
        #expect(inArray?.code == .encoding)
        #expect(inArray?.message.hasPrefix("parameter $2: text parameter contains a NUL character") == true)
    }

    @Test func streamingDeliversEveryRowAndStopsOnError() throws {
        var seen: [Int] = []
        let count = try conn.forEachRow("SELECT g FROM generate_series(1, $1) AS g", [5000]) { row in
            seen.append(try row.decode("g", as: Int.self))
        }
        #expect(count == 5000)
        #expect(seen == Array(1...5000))
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try conn.forEachRow("SELECT g FROM generate_series(1, 100) AS g") { row in
                if row.index == 10 { throw Stop() }
            }
        }
        // Re-entrant use from inside the callback is refused, not corrupting libpq state.
        let reentrant = #expect(throws: PostgresError.self) {
            try conn.forEachRow("SELECT 1") { _ in _ = try conn.execute("SELECT 2") }
        }
        #expect(reentrant?.code == .concurrentUse)
        // The connection is still usable.
        #expect(try conn.queryFirst("SELECT 3 AS n")?.decode("n", as: Int.self) == 3)
    }

    @Test func streamedRowsShareTheirColumnsAndKeepTheirOwnValues() throws {
        var rows: [PostgresRow] = []
        try conn.forEachRow(
            "SELECT g AS n, 'row ' || g AS label, CASE WHEN g % 2 = 0 THEN NULL ELSE g * 10 END AS odd FROM generate_series(1, 4) AS g"
        ) { rows.append($0) }
        #expect(rows.count == 4)
        // Rows kept after the callback still read their own values, by name and by index.
        #expect(try rows.map { try $0.decode("n", as: Int.self) } == [1, 2, 3, 4])
        #expect(try rows.map { try $0.decode("label", as: String.self) } == ["row 1", "row 2", "row 3", "row 4"])
        #expect(try rows.map { try $0.decode(2, as: Int?.self) } == [10, nil, 30, nil])
        #expect(rows.allSatisfy { $0.columnNames == ["n", "label", "odd"] })
        // One set of columns for the whole statement, not one per row.
        #expect(rows.allSatisfy { $0.storage.columns === rows[0].storage.columns })
        // A later statement of another shape gets its own columns.
        try conn.forEachRow("SELECT 'x' AS other") { row throws in
            #expect(row.columnNames == ["other"])
            #expect(try row.decode("other", as: String.self) == "x")
        }
    }
}
