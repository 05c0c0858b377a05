import Foundation
import Postgres
import Reconciler
import TestSupport
import Testing

/// Bad input: malformed import files (bad JSON, missing columns, duplicate ids, wrong dates,
/// CSV quoting errors) through the real `renewal-reconciler import` against a real database. Every bad
/// line is named by number on standard error, the exit status is 64 and nothing is half-loaded; with
/// `--skip-invalid` exactly the good lines load.
@Suite struct BadInputImportTests {
    static let receipt = "TUlJQmFzZTY0UmVjZWlwdA=="

    static func jsonLine(_ id: String, expires: String = "2026-12-01T00:00:00Z", user: String = "u") -> String {
        #"{"user_id":"\#(user)","product_id":"com.example.monthly","original_transaction_id":"\#(id)","#
            + #""latest_receipt":"\#(receipt)","expires_at":"\#(expires)"}"#
    }

    static let csvHeader = "user_id,product_id,original_transaction_id,latest_receipt,expires_at"
    static func csvLine(_ id: String, expires: String = "2026-12-01T00:00:00Z") -> String {
        "u,com.example.monthly,\(id),\(receipt),\(expires)"
    }

    /// A migrated database holding the rows of a first, valid import; `body` gets its URL and an
    /// `import` runner.
    func withImportedDatabase(
        _ body: (
            _ db: TestDatabase, _ dir: URL, _ run: ([String]) async throws -> BadInputConfigurationTests.Outcome
        ) async throws -> Void
    ) async throws {
        let db = try TestDatabase.make()
        defer { db.drop() }
        try await withTemporaryDirectoryAsync { dir in
            let env = ["DATABASE_URL": db.url]
            let run = { (args: [String]) in try await BadInputConfigurationTests.runReconciler(args, environment: env) }
            let sql = BadInputConfigurationTests.packageRoot.appendingPathComponent("sql").path
            let migrated = try await run(["migrate", "--sql-dir", sql])
            try #require(migrated.status == 0, "migrate: \(migrated.stderr)")
            let base = dir.appendingPathComponent("base.jsonl")
            try [Self.jsonLine("1000"), Self.jsonLine("1001"), Self.jsonLine("1002")].joined(separator: "\n")
                .write(to: base, atomically: true, encoding: .utf8)
            let loaded = try await run(["import", "--file", base.path])
            try #require(loaded.status == 0, "base import: \(loaded.stderr)")
            try await body(db, dir, run)
        }
    }

    static func count(_ db: TestDatabase) throws -> Int {
        let conn = try db.connect()
        defer { conn.close() }
        return try #require(try conn.queryFirst("SELECT count(*) FROM subscriptions")).decode(0, as: Int.self)
    }

    static func ids(_ db: TestDatabase) throws -> Set<String> {
        let conn = try db.connect()
        defer { conn.close() }
        return Set(
            try conn.query("SELECT original_transaction_id FROM subscriptions").map {
                try $0.decode("original_transaction_id", as: String.self)
            }
        )
    }

    /// `stderr` names each of `lines` as `line N:` and no other line.
    static func expectNamedLines(_ stderr: String, _ lines: [Int], sourceLocation: SourceLocation = #_sourceLocation) {
        let named = Set(
            stderr.split(separator: "\n").compactMap { row -> Int? in
                guard let range = row.range(of: "line ") else { return nil }
                return Int(row[range.upperBound...].prefix { $0.isNumber })
            }
        )
        #expect(named == Set(lines), "stderr:\n\(stderr)", sourceLocation: sourceLocation)
    }

    @Test func malformedJSONLinesAreEachNamedAndNothingLoads() async throws {
        try await withImportedDatabase { db, dir, run in
            let lines = [
                Self.jsonLine("2001"),  // 1 good
                #"{"user_id":"u2","product_id":"#,  // 2 bad JSON
                // 3 missing latest_receipt
                #"{"user_id":"u","product_id":"p","original_transaction_id":"2003","expires_at":"2026-12-01T00:00:00Z"}"#,
                Self.jsonLine("2001"),  // 4 duplicate of line 1
                Self.jsonLine("2005", expires: "2026-13-01T00:00:00Z"),  // 5 month 13
                Self.jsonLine("2006"),  // 6 good
                "[1, 2, 3]",  // 7 not an object
                Self.jsonLine("2008", expires: "2026-12-01"),  // 8 no time or zone
                Self.jsonLine("2009", expires: "2026-02-30T00:00:00Z"),  // 9 no such day
                // 10 number
                #"{"user_id":7,"product_id":"p","original_transaction_id":"2010","latest_receipt":"QUJD","expires_at":"2026-12-01T00:00:00Z"}"#,
                "",  // 11 blank: skipped, not an error
                Self.jsonLine("1000"),  // 12 good: updates an existing row
            ]
            let file = dir.appendingPathComponent("bad.jsonl")
            try lines.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)

            let strict = try await run(["import", "--file", file.path])
            #expect(strict.status == 64)
            Self.expectNamedLines(strict.stderr, [2, 3, 4, 5, 7, 8, 9, 10])
            #expect(strict.stderr.contains("latest_receipt"))
            #expect(strict.stderr.contains("already appeared on line 1"))
            #expect(strict.stderr.contains("nothing was loaded"))
            #expect(try Self.count(db) == 3)

            let skipping = try await run(["import", "--file", file.path, "--skip-invalid"])
            #expect(skipping.status == 2, "\(skipping.stderr)")
            Self.expectNamedLines(skipping.stderr, [2, 3, 4, 5, 7, 8, 9, 10])
            #expect(skipping.stdout.contains("2 inserted, 1 updated"), "\(skipping.stdout)")
            #expect(try Self.ids(db) == ["1000", "1001", "1002", "2001", "2006"])
        }
    }

    @Test func malformedCSVLinesAreEachNamedAndNothingLoads() async throws {
        try await withImportedDatabase { db, dir, run in
            let lines = [
                Self.csvHeader,  // 1
                Self.csvLine("3001"),  // 2 good
                "u,p\"x\",3002,\(Self.receipt),2026-12-01T00:00:00Z",  // 3 quote inside an unquoted field
                "u,\"p\"x,3003,\(Self.receipt),2026-12-01T00:00:00Z",  // 4 text after a closing quote
                "u,p,3004",  // 5 too few fields
                Self.csvLine("3001"),  // 6 duplicate of line 2
                Self.csvLine("3006", expires: "yesterday"),  // 7 not a date
                Self.csvLine("3007", expires: "2026-12-01T25:00:00Z"),  // 8 hour 25
                // 9 good, quoted
                "\"u,2\",\"com.example.\"\"quoted\"\"\",3008,\(Self.receipt),2026-12-01T00:00:00+01:00",
                "u,p,3009,@@@not base64@@@,2026-12-01T00:00:00Z",  // 10 receipt not base64
                "u,p,3010,\(Self.receipt),2026-12-01T00:00:00Z,extra",  // 11 too many fields
                "u,\"p,3011,\(Self.receipt),2026-12-01T00:00:00Z",  // 12 quote never closed (to the end)
            ]
            let file = dir.appendingPathComponent("bad.csv")
            try (lines.joined(separator: "\r\n") + "\r\n").write(to: file, atomically: true, encoding: .utf8)

            let strict = try await run(["import", "--file", file.path])
            #expect(strict.status == 64)
            Self.expectNamedLines(strict.stderr, [3, 4, 5, 6, 7, 8, 10, 11, 12])
            #expect(try Self.count(db) == 3)

            let skipping = try await run(["import", "--file", file.path, "--skip-invalid"])
            #expect(skipping.status == 2, "\(skipping.stderr)")
            Self.expectNamedLines(skipping.stderr, [3, 4, 5, 6, 7, 8, 10, 11, 12])
            #expect(try Self.ids(db) == ["1000", "1001", "1002", "3001", "3008"])
        }
    }

    @Test func anUnclosedQuoteDoesNotSwallowTheRestOfTheFile() async throws {
        try await withImportedDatabase { db, dir, run in
            var text = Self.csvHeader + "\n" + "\"open,p,1,QUJD,2026-11-21T00:00:00Z\n"
            for id in 0..<5_000 { text += Self.csvLine("7\(id)") + "\n" }
            let file = dir.appendingPathComponent("open-quote.csv")
            try text.write(to: file, atomically: true, encoding: .utf8)

            let strict = try await run(["import", "--file", file.path])
            #expect(strict.status == 64, "\(strict.stderr)")
            Self.expectNamedLines(strict.stderr, [2])
            #expect(strict.stderr.contains("opened on line 2"), "\(strict.stderr)")
            #expect(try Self.count(db) == 3)

            let skipping = try await run(["import", "--file", file.path, "--skip-invalid"])
            #expect(skipping.status == 2, "\(skipping.stderr)")
            Self.expectNamedLines(skipping.stderr, [2])
            #expect(skipping.stdout.contains("5000 inserted, 0 updated"), "\(skipping.stdout)")
            #expect(skipping.stdout.contains("1 invalid line skipped"), "\(skipping.stdout)")
            #expect(try Self.count(db) == 5003)
        }
    }

    /// An unknown column is a warning that names the file once (it named it twice) and loads the file.
    @Test func anUnknownColumnIsOneWarningNamingTheFileOnce() async throws {
        try await withImportedDatabase { db, dir, run in
            let text = Self.csvHeader + ",shoe_size\n" + Self.csvLine("81") + ",42\n"
            let file = dir.appendingPathComponent("extra-column.csv")
            try text.write(to: file, atomically: true, encoding: .utf8)
            let outcome = try await run(["import", "--file", file.path])
            #expect(outcome.status == 0, "\(outcome.stderr)")
            #expect(outcome.stderr.contains("warning: \(file.path): ignoring unknown columns: shoe_size"))
            #expect(outcome.stderr.components(separatedBy: file.path).count == 2, "\(outcome.stderr)")
            #expect(try Self.count(db) == 4)
        }
    }

    @Test func aNULCharacterIsANamedLineErrorWithoutSQL() async throws {
        try await withImportedDatabase { db, dir, run in
            let json = dir.appendingPathComponent("nul.jsonl")
            try [Self.jsonLine("8001", user: #"a\u0000b"#), Self.jsonLine("8002")].joined(separator: "\n")
                .write(to: json, atomically: true, encoding: .utf8)
            var data = Data((Self.csvHeader + "\n").utf8)
            data +=
                Data("u,com.example".utf8) + Data([0x00]) + Data(",8003,\(Self.receipt),2026-12-01T00:00:00Z\n".utf8)
            data += Data((Self.csvLine("8004") + "\n").utf8)
            let csv = dir.appendingPathComponent("nul.csv")
            try data.write(to: csv)

            for (file, badLine, field) in [(json, 1, "user_id"), (csv, 2, "product_id")] {
                let strict = try await run(["import", "--file", file.path])
                #expect(strict.status == 64, "\(strict.stderr)")
                Self.expectNamedLines(strict.stderr, [badLine])
                #expect(strict.stderr.contains("line \(badLine): \(field): contains a NUL"), "\(strict.stderr)")
                for sql in ["INSERT", "SELECT", "unnest", "statement"] {
                    #expect(!strict.stderr.contains(sql), "\(strict.stderr.prefix(500))")
                }
                #expect(strict.stderr.count < 1_000, "\(strict.stderr.prefix(500))")
                #expect(try Self.count(db) == 3)
            }
            for file in [json, csv] {
                let skipping = try await run(["import", "--file", file.path, "--skip-invalid"])
                #expect(skipping.status == 2, "\(skipping.stderr)")
                #expect(skipping.stdout.contains("1 inserted, 0 updated, 1 invalid line skipped"), "\(skipping.stdout)")
            }
            #expect(try Self.ids(db) == ["1000", "1001", "1002", "8002", "8004"])
        }
    }

    @Test func endlessInputEndsWithANamedErrorNotASpin() async throws {
        try await withImportedDatabase { db, dir, _ in
            let environment = [
                "DATABASE_URL": db.url, "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
            ]
            let binary = BadInputConfigurationTests.reconcilerBinary
            // Not a spin: the import stops by itself at its bound (twice the 8 MiB record limit) and says so. No
            // wall-clock bound is asserted (a loaded machine took 60 s for what takes 0.3 s alone); a spin is what
            // reaches the kill limit.
            for extra in [[], ["--format", "jsonl"], ["--format", "jsonl", "--skip-invalid"]] {
                let outcome = try await RunningProcess(
                    binary,
                    ["import", "--file", "/dev/zero"] + extra,
                    environment: environment,
                    directory: dir
                ).wait(limit: 600)
                #expect(outcome.reason == .exit, "\(extra): killed after 600 s")
                #expect(outcome.status == 64, "\(extra): \(outcome.stderr.prefix(500))")
                #expect(outcome.stderr.contains("line 1"), "\(extra): \(outcome.stderr.prefix(500))")
                let stop = "no line break within \(2 * 8 * 1024 * 1024) bytes: the rest of the file was not read"
                #expect(outcome.stderr.contains(stop), "\(extra): \(outcome.stderr.prefix(500))")
                #expect(outcome.stderr.count < 1_000, "\(extra)")
            }
            #expect(try Self.count(db) == 3)
        }
    }

    @Test func csvHeaderProblemsRefuseTheWholeFile() async throws {
        try await withImportedDatabase { db, dir, run in
            let cases: [(name: String, text: String, mention: String)] = [
                ("missing.csv", "user_id,product_id,latest_receipt\nu,p,\(Self.receipt)\n", "expires_at"),
                ("repeated.csv", Self.csvHeader + ",USER_ID\n" + Self.csvLine("4001") + ",u\n", "repeats"),
                ("empty.csv", "", "header"),
                ("broken-header.csv", "user_id,\"product_id\n", "header"),
            ]
            for c in cases {
                let file = dir.appendingPathComponent(c.name)
                try c.text.write(to: file, atomically: true, encoding: .utf8)
                for extra in [[], ["--skip-invalid"]] {
                    let outcome = try await run(["import", "--file", file.path] + extra)
                    #expect(outcome.status == 64, "\(c.name) \(extra)")
                    #expect(outcome.stderr.contains(c.name), "\(c.name): \(outcome.stderr)")
                    #expect(outcome.stderr.contains(c.mention), "\(c.name): \(outcome.stderr)")
                }
            }
            #expect(try Self.count(db) == 3)
        }
    }

    @Test func invalidBytesAndOversizedLinesAreNamedWithoutEchoingTheReceipt() async throws {
        try await withImportedDatabase { db, dir, run in
            // Line 2: invalid UTF-8 inside a CSV field; line 3: a 9 MiB field (over the 8 MiB record limit);
            // line 4: good.
            var data = Data((Self.csvHeader + "\n").utf8)
            data.append(
                Data("u,p".utf8) + Data([0xFF, 0xFE]) + Data(",5001,\(Self.receipt),2026-12-01T00:00:00Z\n".utf8)
            )
            let huge = String(repeating: "QUJD", count: (9 << 20) / 4)
            data.append(Data("u,p,5002,\(huge),2026-12-01T00:00:00Z\n".utf8))
            data.append(Data((Self.csvLine("5003") + "\n").utf8))
            let file = dir.appendingPathComponent("bytes.csv")
            try data.write(to: file)

            let strict = try await run(["import", "--file", file.path])
            #expect(strict.status == 64)
            Self.expectNamedLines(strict.stderr, [2, 3])
            #expect(!strict.stderr.contains(String(huge.prefix(64))), "a receipt is echoed")
            #expect(strict.stderr.count < 10_000)
            #expect(try Self.count(db) == 3)

            let skipping = try await run(["import", "--file", file.path, "--skip-invalid"])
            #expect(skipping.status == 2, "\(skipping.stderr)")
            #expect(try Self.ids(db) == ["1000", "1001", "1002", "5003"])
        }
    }

    @Test func hostileJSONLinesAreNamedWithoutCrashing() async throws {
        try await withImportedDatabase { db, dir, run in
            // Deep nesting (a recursive parser would overflow its stack), NUL bytes, a lone surrogate escape.
            var data = Data(String(repeating: "[", count: 200_000).utf8) + Data("\n".utf8)
            data += Data(String(repeating: #"{"a":"#, count: 100_000).utf8) + Data("\n".utf8)
            data += Data([0x00, 0x00, 0x7B, 0x00, 0x0A])
            data += Data((Self.jsonLine("6004").replacingOccurrences(of: #""u""#, with: #""\uD800""#) + "\n").utf8)
            data += Data((Self.jsonLine("6005") + "\n").utf8)
            let file = dir.appendingPathComponent("hostile.jsonl")
            try data.write(to: file)

            let strict = try await run(["import", "--file", file.path])
            #expect(strict.status == 64, "\(strict.stderr.prefix(2000))")
            #expect(strict.stderr.count < 10_000)
            let named = strict.stderr.split(separator: "\n").filter { $0.contains("line ") }.count
            #expect(named >= 3, "\(strict.stderr.prefix(2000))")
            for line in 1...3 { #expect(strict.stderr.contains("line \(line):"), "line \(line)") }
            #expect(!strict.stderr.contains("line 5:"))
            #expect(try Self.count(db) == 3)
        }
    }
}
