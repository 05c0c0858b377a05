import Dispatch
import Foundation
import Synchronization
import Testing

@testable import Reconciler

@Suite struct CSVWriterTests {
    private let writer = CSVWriter(columns: [
        CSVColumn("user_id"), CSVColumn("delta_days", .numeric), CSVColumn("note"),
    ])

    @Test func headerAndPlainRowUseCRLF() throws {
        #expect(writer.header() == "user_id,delta_days,note\r\n")
        #expect(try writer.row(["u1", "3", "ok"]) == "u1,3,ok\r\n")
    }

    @Test func quotesFieldsWithCommaQuoteCRorLF() throws {
        #expect(try writer.row(["a,b", "1", "say \"hi\""]) == "\"a,b\",1,\"say \"\"hi\"\"\"\r\n")
        #expect(try writer.row(["line1\nline2", "2", "x\ry"]) == "\"line1\nline2\",2,\"x\ry\"\r\n")
        #expect(try writer.row(["", "", ""]) == ",,\r\n")
    }

    @Test func hyperlinkFormulaStaysText() {
        let encoded = CSVWriter.encodeField("=HYPERLINK(\"http://x\",\"y\")", kind: .text)
        #expect(encoded == "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"")
    }

    @Test func everyHostileLeadingCharacterIsNeutralisedInText() {
        for value in ["=1+1", "+1", "-2+3", "@SUM(A1)", "\tcmd", "\rcmd", "-5"] {
            let encoded = CSVWriter.encodeField(value, kind: .text)
            #expect(encoded.hasPrefix("'") || encoded.hasPrefix("\"'"), "\(value.debugDescription) -> \(encoded)")
        }
        #expect(CSVWriter.encodeField("plain", kind: .text) == "plain")
        #expect(CSVWriter.encodeField("a=b", kind: .text) == "a=b")
    }

    /// Control characters (ESC, NUL) and bidirectional overrides reach no spreadsheet or terminal as they are: shown
    /// as control pictures and U+FFFD, in text and numeric columns alike; tab and line breaks stay (quoted).
    @Test func controlAndBidirectionalCharactersAreShownNotObeyed() {
        #expect(CSVWriter.encodeField("a\u{1B}[2Jb\u{0}", kind: .text) == "a\u{241B}[2Jb\u{2400}")
        #expect(CSVWriter.encodeField("user-\u{202E}gpj.exe", kind: .text) == "user-\u{FFFD}gpj.exe")
        #expect(CSVWriter.encodeField("\u{200F}\u{2067}x\u{9B}", kind: .numeric) == "\u{FFFD}\u{FFFD}x\u{FFFD}")
        #expect(CSVWriter.encodeField("a\tb\nc", kind: .text) == "\"a\tb\nc\"")
        // Made visible first, then guarded: a control before a formula leaves nothing a spreadsheet would run.
        #expect(CSVWriter.encodeField("\u{7F}=1+1", kind: .text) == "\u{2421}=1+1")
    }

    @Test func numbersAndDatesInNumericColumnsAreNotTouched() {
        for value in ["-5", "+3", "-0.25", "1e-3", "-1.5E+10", "2024-01-01", "2024-01-01T00:00:00Z", "42"] {
            #expect(CSVWriter.encodeField(value, kind: .numeric) == value)
        }
    }

    @Test func formulaInNumericColumnIsStillNeutralised() {
        #expect(CSVWriter.encodeField("-1+cmd|' /C calc'!A0", kind: .numeric) == "'-1+cmd|' /C calc'!A0")
        #expect(CSVWriter.encodeField("=1", kind: .numeric) == "'=1")
        #expect(CSVWriter.encodeField("-", kind: .numeric) == "'-")
        #expect(CSVWriter.encodeField("-1e", kind: .numeric) == "'-1e")
    }

    @Test func rowByNameKeepsColumnOrder() {
        #expect(writer.row(["note": "n", "user_id": "u", "unused": "z"]) == "u,,n\r\n")
    }

    @Test func wrongWidthIsAnError() {
        #expect(throws: CSVWriterError(expected: 3, got: 2)) { try writer.row(["a", "b"]) }
        #expect(CSVWriterError(expected: 3, got: 2).description.contains("2 values, expected 3"))
    }

    @Test func writesUTF8ToFileHandle() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("csvwriter-\(UUID().uuidString).csv")
        defer { try? FileManager.default.removeItem(at: url) }
        #expect(FileManager.default.createFile(atPath: url.path, contents: nil))
        let handle = try FileHandle(forWritingTo: url)
        try writer.write(rows: [["ü", "1", "日本"], ["=x", "-5", "a\"b"]], to: handle)
        try handle.close()
        let data = try Data(contentsOf: url)
        let expected = "user_id,delta_days,note\r\nü,1,日本\r\n'=x,-5,\"a\"\"b\"\r\n"
        #expect(data == Data(expected.utf8))
        #expect(try writer.document(rows: [["ü", "1", "日本"], ["=x", "-5", "a\"b"]]) == expected)
    }

}
