import Foundation
import Testing

@testable import Reconciler

/// A temporary file removed when the value is dropped.
private final class TempFile {
    let path: String

    init(_ contents: String, extension ext: String) throws {
        path =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("import-\(UUID().uuidString).\(ext)").path
        try Data(contents.utf8).write(to: URL(fileURLWithPath: path))
    }

    init(bytes: [UInt8], extension ext: String) throws {
        path =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("import-\(UUID().uuidString).\(ext)").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

@Suite struct ImportParserTests {
    static let receipt = "MIIT0QYJKoZIhvcNAQcCoIITwjCCE74CAQExCzAJBgUrDgMCGgUAMIIDcgYJ/+A="
    static let header = "user_id,product_id,original_transaction_id,latest_receipt,expires_at"

    private func csvLine(_ id: Int, expires: String = "2024-05-01T12:00:00Z") -> String {
        "u\(id),com.example.monthly,1000000\(id),\(Self.receipt),\(expires)"
    }

    private func jsonLine(
        _ id: Int,
        expires: String = "2024-05-01T12:00:00Z",
        extra: String = ""
    ) -> String {
        #"{"user_id":"u\#(id)","product_id":"com.example.monthly","original_transaction_id":"1000000\#(id)","latest_receipt":"\#(Self.receipt)","expires_at":"\#(expires)"\#(extra)}"#
    }

    private func parseAll(
        _ file: TempFile,
        format: ImportFormat? = nil,
        options: ImportParser.Options = .init()
    )
        throws -> (ImportParser, [Result<ImportRecord, ImportLineError>])
    {
        let parser = try ImportParser(path: file.path, format: format, options: options)
        return (parser, Array(parser))
    }

    private func errors(_ results: [Result<ImportRecord, ImportLineError>]) -> [ImportLineError] {
        results.compactMap { if case .failure(let error) = $0 { error } else { nil } }
    }

    private func records(_ results: [Result<ImportRecord, ImportLineError>]) -> [ImportRecord] {
        results.compactMap { try? $0.get() }
    }

    // MARK: Happy paths

    @Test func parsesJSONLinesWithOptionalFieldsAndEscapedSlashes() throws {
        let escaped = Self.receipt.replacingOccurrences(of: "/", with: "\\/")
        let text = """
            {"user_id":"u1","product_id":"p","original_transaction_id":"42","latest_receipt":"\(escaped)","expires_at":"2024-05-01T14:00:00.250+02:00","environment":"sandbox","bundle_id":"com.example.app"}

            \(jsonLine(2, extra: #","environment":null"#))
            """
        let (_, results) = try parseAll(TempFile(text, extension: "jsonl"))
        let parsed = records(results)
        try #require(parsed.count == 2 && errors(results).isEmpty)
        #expect(parsed[0].latestReceipt == Self.receipt)
        #expect(parsed[0].environment == .sandbox)
        #expect(parsed[0].bundleId == "com.example.app")
        #expect(parsed[0].expiresAt == Date(timeIntervalSince1970: 1_714_564_800.25))
        #expect(parsed[0].line == 1)
        #expect(parsed[1].line == 3)
        #expect(parsed[1].environment == nil)
        #expect(parsed[1].bundleId == nil)
    }

    @Test func parsesCSVWithColumnsInAnyOrderQuotingAndCRLF() throws {
        let text =
            "\u{FEFF}expires_at,Environment,latest_receipt,original_transaction_id,product_id,user_id\r\n"
            + "2024-05-01T12:00:00Z,PRODUCTION,\(Self.receipt),1,p,\"Doe, \"\"Jane\"\"\"\r\n"
            + "\r\n"
            + "2024-05-01T12:00:00Z,,\(Self.receipt),2,p,\"multi\r\nline\nuser\"\r\n"
            + "2024-05-01T12:00:00Z,Sandbox,\(Self.receipt),3,p,u3"  // no final line break
        let (parser, results) = try parseAll(TempFile(text, extension: "csv"))
        let parsed = records(results)
        try #require(parsed.count == 3, "\(errors(results))")
        #expect(parser.format == .csv)
        #expect(parsed[0].userId == "Doe, \"Jane\"")
        #expect(parsed[0].environment == .production)
        #expect(parsed[1].userId == "multi\r\nline\nuser")
        #expect(parsed[1].environment == nil)
        #expect(parsed.map(\.line) == [2, 4, 7])
        #expect(parsed[2].environment == .sandbox)
        #expect(parser.warnings.isEmpty)
    }

    @Test func smallChunksGiveTheSameResultAsLargeOnes() throws {
        let text =
            "\(Self.header),bundle_id\r\n"
            + "u1,p,1,\(Self.receipt),2024-05-01T12:00:00Z,\"a\r\n\"\"b\"\"\"\r\n"
            + "u2,p,2,\(Self.receipt),2024-05-01T12:00:00Z,\r\n"
            + "u\"3,p,3,\(Self.receipt),2024-05-01T12:00:00Z,x\r\n"
            + "u4,p,4,\(Self.receipt),2024-05-01T12:00:00Z,\"\"\r"
        let file = try TempFile(text, extension: "csv")
        let large = try parseAll(file).1.map { String(describing: $0) }
        for chunk in [16, 17, 31] {
            let small = try parseAll(file, options: .init(chunkSize: chunk)).1.map { String(describing: $0) }
            #expect(small == large, "chunk \(chunk)")
        }
        #expect(large.count == 4)
    }

    @Test func readsA300000CharacterReceiptInBothFormats() throws {
        let body = String(repeating: "QUJD", count: 75_000)
        #expect(body.count == 300_000)
        let json = try TempFile(
            #"{"user_id":"u","product_id":"p","original_transaction_id":"9","latest_receipt":"\#(body)","expires_at":"2030-01-01T00:00:00Z"}"#
                + "\n",
            extension: "ndjson"
        )
        let csv = try TempFile("\(Self.header)\nu,p,9,\"\(body)\",2030-01-01T00:00:00Z\n", extension: "csv")
        for file in [json, csv] {
            let (_, results) = try parseAll(file, options: .init(chunkSize: 4096))
            let parsed = records(results)
            try #require(parsed.count == 1, "\(errors(results))")
            #expect(parsed[0].latestReceipt.utf8.count == 300_000)
            #expect(parsed[0].receiptSummary == "QUJDQUJDQUJDQUJD… (300000 chars)")
        }
    }

    @Test func fileHandleSourceAndSniffing() throws {
        let file = try TempFile(jsonLine(1) + "\n" + jsonLine(2) + "\n", extension: "txt")
        let handle = try #require(FileHandle(forReadingAtPath: file.path))
        defer { try? handle.close() }
        let parser = try ImportParser(fileHandle: handle, name: "<stdin>")
        #expect(parser.format == .jsonLines)
        #expect(records(Array(parser)).count == 2)

        let bomJSON = try TempFile("\u{FEFF}" + jsonLine(1) + "\r\n", extension: "txt")
        let bomParser = try ImportParser(path: bomJSON.path)
        #expect(bomParser.format == .jsonLines)
        #expect(records(Array(bomParser)).map(\.line) == [1])

        let csv = try TempFile("\(Self.header)\n\(csvLine(1))\n", extension: "dat")
        #expect(try ImportParser(path: csv.path).format == .csv)
        // An explicit format wins over the extension.
        let mislabelled = try TempFile("\(Self.header)\n\(csvLine(1))\n", extension: "json")
        #expect(try ImportParser(path: mislabelled.path).format == .jsonLines)
        let forced = try ImportParser(path: mislabelled.path, format: .csv)
        #expect(records(Array(forced)).count == 1)
    }

    @Test func formatDetectionHelpers() {
        #expect(ImportFormat.fromExtension(of: "/tmp/a.JSONL") == .jsonLines)
        #expect(ImportFormat.fromExtension(of: "x.ndjson") == .jsonLines)
        #expect(ImportFormat.fromExtension(of: "x.json") == .jsonLines)
        #expect(ImportFormat.fromExtension(of: "x.csv") == .csv)
        #expect(ImportFormat.fromExtension(of: "dir.csv/file") == nil)
        #expect(ImportFormat.sniff(Array("  \n{\"a\":1}".utf8)) == .jsonLines)
        #expect(ImportFormat.sniff(Array("user_id,".utf8)) == .csv)
    }

    // MARK: Field errors

    @Test func everyFieldErrorNamesLineAndField() throws {
        let lines = [
            jsonLine(1),
            #"{"product_id":"p","original_transaction_id":"2","latest_receipt":"QUJD","expires_at":"2024-05-01T12:00:00Z"}"#,
            #"{"user_id":"","product_id":"p","original_transaction_id":"3","latest_receipt":"QUJD","expires_at":"2024-05-01T12:00:00Z"}"#,
            #"{"user_id":"u","product_id":"p","original_transaction_id":"4 5","latest_receipt":"QUJD","expires_at":"2024-05-01T12:00:00Z"}"#,
            #"{"user_id":"u","product_id":"p","original_transaction_id":"6","latest_receipt":"QU%JDsecretsecret","expires_at":"2024-05-01T12:00:00Z"}"#,
            jsonLine(7, expires: "2024-13-01"),
            jsonLine(8, expires: "2024-05-01T12:00:00"),
            jsonLine(9, extra: #","environment":"staging""#),
            #"{"user_id":5,"product_id":"p","original_transaction_id":"10","latest_receipt":"QUJD","expires_at":"2024-05-01T12:00:00Z"}"#,
            #"{"user_id":"u","product_id":"p","#,
            #"["not","an","object"]"#,
            jsonLine(1),
            jsonLine(13, expires: "2024-02-30T00:00:00Z"),
            #"{"user_id":"u","product_id":"p","original_transaction_id":"14","latest_receipt":"QUJD=QUJD","expires_at":"2024-05-01T12:00:00Z"}"#,
            jsonLine(15, extra: #","bundle_id":true"#),
            #"{"user_id":"u","product_id":"p","original_transaction_id":"16","latest_receipt":"QUJD","expires_at":"2024-05-01T12:00:00Z","environment":""}"#,
        ]
        let (_, results) = try parseAll(TempFile(lines.joined(separator: "\n"), extension: "jsonl"))
        #expect(results.count == lines.count)
        let messages = results.map { result -> String in
            switch result {
            case .success(let record): "ok \(record.originalTransactionId)"
            case .failure(let error): error.description
            }
        }
        #expect(
            messages == [
                "ok 10000001",
                "line 2: user_id: is missing",
                "line 3: user_id: must not be empty",
                #"line 4: original_transaction_id: "4 5" contains whitespace"#,
                "line 5: latest_receipt: is not base64: invalid character U+0025 at offset 2 (length 17)",
                #"line 6: expires_at: "2024-13-01" is not an RFC 3339 timestamp: a date without a time and zone offset"#,
                #"line 7: expires_at: "2024-05-01T12:00:00" is not an RFC 3339 timestamp: no time zone offset (add Z or ±hh:mm)"#,
                #"line 8: environment: "staging" is not Production or Sandbox"#,
                "line 9: user_id: expected a string, got a number",
                "line 10: is not valid JSON",
                "line 11: expected a JSON object, got an array",
                #"line 12: original_transaction_id: "10000001" already appeared on line 1"#,
                #"line 13: expires_at: "2024-02-30T00:00:00Z" is not an RFC 3339 timestamp"#,
                "line 14: latest_receipt: is not base64: data after '=' padding at offset 5 (length 9)",
                "line 15: bundle_id: expected a string, got a boolean",
                "ok 16",
            ]
        )
        let codes = errors(results).map(\.code)
        #expect(
            codes == [
                .missingField, .emptyField, .invalidValue, .invalidReceipt, .invalidTimestamp, .invalidTimestamp,
                .invalidValue, .invalidValue, .malformedJSON, .malformedJSON, .duplicateTransaction,
                .invalidTimestamp, .invalidReceipt, .invalidValue,
            ]
        )
        #expect(errors(results).first { $0.code == .duplicateTransaction }?.firstLine == 1)
        #expect(!messages.joined().contains("secret"))
    }

    @Test func hostileJSONIsAnErrorNotACrash() throws {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let manyKeys = "{" + (0..<500).map { "\"k\($0)\":1" }.joined(separator: ",") + "}"
        let file = try TempFile([deep, manyKeys, jsonLine(3)].joined(separator: "\n"), extension: "jsonl")
        let (parser, results) = try parseAll(file)
        #expect(errors(results).map(\.code) == [.malformedJSON, .missingField])
        #expect(records(results).map(\.line) == [3])
        #expect(parser.unknownFields.count == 50)
        #expect(parser.warnings.count == 1)
    }

    @Test func receiptContentNeverAppearsInErrors() throws {
        let secret = String(repeating: "c2VjcmV0", count: 100) + "!"
        let line =
            #"{"user_id":"u","product_id":"p","original_transaction_id":"1","latest_receipt":"\#(secret)","expires_at":"2024-05-01T12:00:00Z"}"#
        let (_, results) = try parseAll(TempFile(line, extension: "jsonl"))
        let error = try #require(errors(results).first)
        #expect(
            error.description
                == "line 1: latest_receipt: is not base64: invalid character U+0021 at offset 800 (length 801)"
        )
        #expect(!error.description.contains("c2VjcmV0"))
    }

    @Test func duplicatesAreReportedInCSVWithBothLines() throws {
        let text = [Self.header, csvLine(1), csvLine(2), "", csvLine(1)].joined(separator: "\n")
        let (parser, results) = try parseAll(TempFile(text, extension: "csv"))
        let failure = try #require(errors(results).first)
        #expect(failure.code == .duplicateTransaction)
        #expect(failure.line == 5)
        #expect(failure.firstLine == 2)
        #expect(failure.field == "original_transaction_id")
        #expect(records(results).count == 2)
        #expect(parser.rememberedTransactionCount == 2)
    }

    // MARK: CSV syntax errors

    @Test func csvSyntaxErrorsAreReportedAndParsingResumesOnTheNextLine() throws {
        let text = [
            Self.header,
            "u1,p,1,\(Self.receipt),2024-05-01T12:00:00Z",
            "u\"2,p,2,\(Self.receipt),2024-05-01T12:00:00Z",
            "\"u3\"x,p,3,\(Self.receipt),2024-05-01T12:00:00Z",
            "u4,p,4,\(Self.receipt)",
            "u5,p,5,\(Self.receipt),2024-05-01T12:00:00Z,extra",
            "u6,p,6,\(Self.receipt),2024-05-01T12:00:00Z",
            "u7,p,7,\(Self.receipt),\"2024-05-01T12:00:00Z",
            "u8,p,8,\(Self.receipt),2024-05-01T12:00:00Z",
        ].joined(separator: "\n")
        let (_, results) = try parseAll(TempFile(text, extension: "csv"))
        let messages = results.map { result -> String in
            switch result {
            case .success(let record): "ok \(record.originalTransactionId) @\(record.line)"
            case .failure(let error): error.description
            }
        }
        #expect(
            messages == [
                "ok 1 @2",
                "line 3: user_id: unexpected quote inside an unquoted field",
                "line 4: user_id: unexpected character after a closing quote",
                "line 5: expected 5 fields, found 4",
                "line 6: expected 5 fields, found 6",
                "ok 6 @7",
                "line 8: expires_at: unterminated quoted field: the quote opened on line 8 is still open at the end "
                    + "of the file (it covered 2 lines); the record is taken as line 8 alone",
                "ok 8 @9",
            ]
        )
        #expect(
            errors(results).map(\.code) == [
                .malformedCSV, .malformedCSV, .wrongFieldCount, .wrongFieldCount, .malformedCSV,
            ]
        )
        // Within the bound, a quoted field may still break a line.
        let multiLine = try TempFile(
            [Self.header, "\"u\n1\",p,1,\(Self.receipt),2024-05-01T12:00:00Z", csvLine(2)].joined(separator: "\n"),
            extension: "csv"
        )
        #expect(records(try parseAll(multiLine).1).map(\.line) == [2, 4])
    }

    @Test func emptyCSVFieldsAndQuotedHeaders() throws {
        let text =
            "\"user_id\", product_id ,original_transaction_id,latest_receipt,expires_at,bundle_id\n"
            + "u1,,1,\(Self.receipt),2024-05-01T12:00:00Z,\n"
            + "u2,p,2,\"\",2024-05-01T12:00:00Z,b\n"
            + "u3,p,3,\(Self.receipt),2024-05-01T12:00:00Z,\"\"\n"
        let (_, results) = try parseAll(TempFile(text, extension: "csv"))
        #expect(
            errors(results).map(\.description) == [
                "line 2: product_id: must not be empty", "line 3: latest_receipt: must not be empty",
            ]
        )
        let parsed = records(results)
        #expect(parsed.map(\.originalTransactionId) == ["3"])
        #expect(parsed.first?.bundleId == nil)
    }

    @Test func invalidUTF8AndOverlongRecords() throws {
        var bytes = Array("\(Self.header)\n".utf8)
        bytes += Array("u".utf8) + [0xFF, 0xFE] + Array(",p,1,\(Self.receipt),2024-05-01T12:00:00Z\n".utf8)
        // Over the 200-byte limit but under twice it: skipped to its line break (twice it stops the file).
        bytes += Array("u2,p,2,\(String(repeating: "QUJD", count: 60)),2024-05-01T12:00:00Z\n".utf8)
        bytes += Array("u3,p,3,\(Self.receipt),2024-05-01T12:00:00Z\n".utf8)
        let file = try TempFile(bytes: bytes, extension: "csv")
        let (parser, results) = try parseAll(file, options: .init(maxRecordBytes: 200, chunkSize: 64))
        #expect(errors(results).map(\.code) == [.invalidUTF8, .recordTooLong])
        #expect(errors(results).map(\.line) == [2, 3])
        #expect(records(results).map(\.originalTransactionId) == ["3"])
        #expect(parser.bufferHighWaterMark < 64 + 1024)

        let json = try TempFile(
            jsonLine(1) + "\n" + jsonLine(2, extra: ",\"pad\":\"\(String(repeating: "x", count: 300))\"") + "\n"
                + jsonLine(3),
            extension: "jsonl"
        )
        let (_, jsonResults) = try parseAll(json, options: .init(maxRecordBytes: 300, chunkSize: 32))
        #expect(errors(jsonResults).map(\.description) == ["line 2: line is longer than 300 bytes"])
        #expect(records(jsonResults).map(\.line) == [1, 3])
    }

    // MARK: File-level problems and warnings

    @Test func missingRequiredColumnsIsAFileError() throws {
        let file = try TempFile("user_id,latest_receipt,product_id\nu,QUJD,p\n", extension: "csv")
        #expect(throws: ImportFileError.self) { try ImportParser(path: file.path) }
        do {
            _ = try ImportParser(path: file.path)
        } catch {
            #expect(error.code == .missingColumns)
            #expect(error.columns == ["expires_at", "original_transaction_id"])
            #expect(error.description == "\(file.path): missing required columns: expires_at, original_transaction_id")
        }
    }

    @Test func otherFileErrors() throws {
        let duplicated = try TempFile("\(Self.header),user_id\n", extension: "csv")
        let empty = try TempFile("\n\n", extension: "csv")
        let badHeader = try TempFile("user_id,\"product_id\n", extension: "csv")
        var codes: [ImportFileError.Code] = []
        for path in [duplicated.path, empty.path, badHeader.path, "/nonexistent/dir/file.csv"] {
            do {
                _ = try ImportParser(path: path)
                Issue.record("expected a file error for \(path)")
            } catch {
                codes.append(error.code)
            }
        }
        #expect(codes == [.duplicateColumns, .missingHeader, .malformedHeader, .cannotOpen])
        // A directory opens but cannot be read (EISDIR): a read failure, not a crash.
        #expect(throws: ImportFileError.self) { try ImportParser(path: FileManager.default.temporaryDirectory.path) }
        // An empty JSON Lines file is simply empty.
        let emptyJSON = try TempFile("", extension: "jsonl")
        #expect(try parseAll(emptyJSON).1.isEmpty)
    }

    @Test func unknownFieldsGiveOneWarning() throws {
        let csv = try TempFile("\(Self.header),Shoe_Size,notes\n\(csvLine(1)),44,hi\n", extension: "csv")
        let parser = try ImportParser(path: csv.path)
        #expect(parser.warnings == ["\(csv.path): ignoring unknown columns: Shoe_Size, notes"])
        #expect(records(Array(parser)).count == 1)

        let json = try TempFile(
            [jsonLine(1, extra: #","zeta":1"#), jsonLine(2, extra: #","alpha":true,"zeta":2"#)].joined(separator: "\n"),
            extension: "jsonl"
        )
        let (jsonParser, results) = try parseAll(json)
        #expect(records(results).count == 2)
        #expect(jsonParser.unknownFields == ["alpha", "zeta"])
        #expect(jsonParser.warnings.count == 1)
    }

    // MARK: Bounds (docs/operations.md, "Backfill, import, explain")

    @Test func anUnclosedQuoteDoesNotSwallowTheLinesAfterIt() throws {
        var lines = [Self.header, "\"open,p,1,QUJD,2026-11-21T00:00:00Z"]
        for id in 2...301 { lines.append(csvLine(id)) }
        let file = try TempFile(lines.joined(separator: "\n") + "\n", extension: "csv")
        for chunk in [16, 64 << 10] {
            let (_, results) = try parseAll(file, options: .init(chunkSize: chunk))
            let failures = errors(results)
            #expect(failures.map(\.line) == [2], "chunk \(chunk)")
            #expect(failures.first?.code == .malformedCSV)
            #expect(failures.first?.description.contains("opened on line 2") == true, "\(failures)")
            #expect(failures.first?.description.contains("lines") == true, "\(failures)")
            #expect(records(results).count == 300, "chunk \(chunk)")
            #expect(records(results).first?.line == 3)
            #expect(records(results).last?.line == 302)
        }
    }

    @Test func aQuoteStillOpenAtTheEndOfTheFileNamesItsLineAndTheLinesAfterItLoad() throws {
        let text = [Self.header, csvLine(1), "u2,\"p,2,QUJD,2024-05-01T12:00:00Z", csvLine(3), csvLine(4)]
            .joined(separator: "\n")
        let (_, results) = try parseAll(TempFile(text, extension: "csv"))
        let failure = try #require(errors(results).first)
        #expect(errors(results).count == 1)
        #expect(failure.line == 3)
        #expect(failure.description.contains("opened on line 3"), "\(failure)")
        #expect(failure.description.contains("end of the file"), "\(failure)")
        #expect(records(results).map(\.line) == [2, 4, 5])
    }

    @Test func aFailedRecordOverSeveralLinesGivesBackTheLinesItSwallowed() throws {
        // Line 2's quote is closed by line 3's first quote: a record of two lines that fails.
        let text = [
            Self.header, "u2,\"p,2,QUJD,2024-05-01T12:00:00Z", "\"u3\",p,3,QUJD,2024-05-01T12:00:00Z", csvLine(4),
        ]
        .joined(separator: "\n")
        for chunk in [16, 64 << 10] {
            let (_, results) = try parseAll(TempFile(text, extension: "csv"), options: .init(chunkSize: chunk))
            #expect(errors(results).map(\.line) == [2], "chunk \(chunk): \(errors(results))")
            #expect(errors(results).first?.description.contains("taken as line 2 alone") == true)
            #expect(records(results).map(\.line) == [3, 4], "chunk \(chunk)")
        }
    }

    @Test func valuesTheDatabaseCannotStoreAreNamedLineErrors() throws {
        let long = String(repeating: "9", count: 3000)
        let lines = [
            #"{"user_id":"a\u0000b","product_id":"p","original_transaction_id":"1","latest_receipt":"QUJD","expires_at":"2024-05-01T12:00:00Z"}"#,
            jsonLine(2, extra: #","bundle_id":"com.\u0000x""#),
            #"{"user_id":"u","product_id":"p","original_transaction_id":"\#(long)","latest_receipt":"QUJD","expires_at":"2024-05-01T12:00:00Z"}"#,
            #"{"user_id":"\#(long)","product_id":"p","original_transaction_id":"4","latest_receipt":"QUJD","expires_at":"2024-05-01T12:00:00Z"}"#,
            jsonLine(5),
        ]
        let (_, results) = try parseAll(TempFile(lines.joined(separator: "\n"), extension: "jsonl"))
        let failures = errors(results)
        try #require(failures.map(\.line) == [1, 2, 3, 4], "\(results)")
        #expect(failures.map(\.field) == ["user_id", "bundle_id", "original_transaction_id", "user_id"])
        #expect(failures[0].description == "line 1: user_id: contains a NUL character, which the database cannot store")
        #expect(failures[2].description.contains("3000 bytes"), "\(failures[2])")
        #expect(failures.allSatisfy { $0.description.utf8.count < 200 }, "\(failures)")
        #expect(records(results).map(\.line) == [5])

        var bytes = Array("\(Self.header)\n".utf8)
        bytes += Array("a".utf8) + [0x00] + Array("b,p,1,\(Self.receipt),2024-05-01T12:00:00Z\n".utf8)
        bytes += Array("\(csvLine(2))\n".utf8)
        let (_, csvResults) = try parseAll(TempFile(bytes: bytes, extension: "csv"))
        #expect(
            errors(csvResults).map(\.description) == [
                "line 2: user_id: contains a NUL character, which the database cannot store"
            ]
        )
        #expect(records(csvResults).map(\.line) == [3])
    }

    @Test func productIdsFollowTheCatalogsRule() throws {
        let lines = [
            jsonLine(1).replacingOccurrences(of: "com.example.monthly", with: "com.example monthly"),
            jsonLine(2).replacingOccurrences(of: "com.example.monthly", with: #"com.example\nmonthly"#),
            jsonLine(3).replacingOccurrences(of: "com.example.monthly", with: #"com.example\u0007monthly"#),
            jsonLine(4).replacingOccurrences(of: "com.example.monthly", with: String(repeating: "p", count: 2000)),
            jsonLine(5),
        ]
        let (_, results) = try parseAll(TempFile(lines.joined(separator: "\n"), extension: "jsonl"))
        #expect(errors(results).map(\.line) == [1, 2, 3, 4])
        #expect(errors(results).allSatisfy { $0.field == "product_id" }, "\(errors(results))")
        #expect(errors(results).first?.description.contains("contains whitespace") == true)
        #expect(records(results).map(\.line) == [5])
    }

    @Test func currenciesAreRealISO4217Codes() throws {
        let lines = ["XTS", "ZZZ", "XAU", "usd", "USD", "JPY"].enumerated().map { index, code in
            jsonLine(index + 1, extra: #","currency":"\#(code)""#)
        }
        let (_, results) = try parseAll(TempFile(lines.joined(separator: "\n"), extension: "jsonl"))
        #expect(errors(results).map(\.line) == [1, 2, 3, 4])
        #expect(errors(results).allSatisfy { $0.field == "currency" }, "\(errors(results))")
        #expect(errors(results).first?.description.contains("ISO 4217") == true)
        #expect(records(results).map(\.currency) == ["USD", "JPY"])
    }

    @Test func appAccountTokensAreUUIDsStoredLowercase() throws {
        let tokens = ["not-a-uuid", "7E3FB20B-4CDB-47CC-936D-99D65F608138", "7e3fb20b-4cdb-47cc-936d-99d65f60813"]
        let lines = tokens.enumerated().map { index, token in
            jsonLine(index + 1, extra: #","app_account_token":"\#(token)""#)
        }
        let (_, results) = try parseAll(TempFile(lines.joined(separator: "\n"), extension: "jsonl"))
        #expect(errors(results).map(\.line) == [1, 3])
        #expect(errors(results).allSatisfy { $0.field == "app_account_token" }, "\(errors(results))")
        #expect(errors(results).first?.description.contains("not a UUID") == true)
        #expect(records(results).map(\.appAccountToken) == ["7e3fb20b-4cdb-47cc-936d-99d65f608138"])
    }

    @Test func aLineWithoutALineBreakEndsTheFileWithAnError() throws {
        let body = String(repeating: "x", count: 50_000)
        for (text, ext) in [("\(Self.header)\nu,p,1,\(body)", "csv"), ("{\"user_id\":\"\(body)", "jsonl")] {
            let file = try TempFile(text + "\n" + (ext == "csv" ? csvLine(2) : jsonLine(2)), extension: ext)
            let (parser, results) = try parseAll(file, options: .init(maxRecordBytes: 1000, chunkSize: 256))
            let failure = try #require(errors(results).first)
            #expect(errors(results).count == 1, "\(ext): \(errors(results))")
            #expect(failure.code == .recordTooLong)
            #expect(failure.line == (ext == "csv" ? 2 : 1))
            #expect(failure.description.contains("no line break"), "\(ext): \(failure)")
            #expect(records(results).isEmpty, "\(ext): the file was not read past the line")
            #expect(parser.bufferHighWaterMark < 4096)
        }
    }

    // MARK: Scale

    @Test func twoHundredThousandLinesWithBoundedBuffers() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("import-big-\(UUID().uuidString).csv")
            .path
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.write(contentsOf: Data("\(Self.header)\r\n".utf8))
        var block = ""
        for id in 0..<200_000 {
            block += "u\(id),p,\(id),\(Self.receipt),2024-05-01T12:00:00Z\r\n"
            if id % 10_000 == 9_999 {
                try handle.write(contentsOf: Data(block.utf8))
                block = ""
            }
        }
        try handle.close()
        let parser = try ImportParser(path: path, options: .init(chunkSize: 64 << 10))
        var count = 0
        var lastLine = 0
        var maxBuffer = 0
        for result in parser {
            let record = try result.get()
            count += 1
            lastLine = record.line
            if count % 20_000 == 0 { maxBuffer = max(maxBuffer, parser.bufferHighWaterMark) }
        }
        #expect(count == 200_000)
        #expect(lastLine == 200_001)
        // Chunk (64 KiB) plus one short record: nowhere near the ~23 MB file.
        #expect(maxBuffer < (64 << 10) + 4096)
        #expect(parser.bufferHighWaterMark < (64 << 10) + 4096)
        #expect(parser.rememberedTransactionCount == 200_000)
    }
}
