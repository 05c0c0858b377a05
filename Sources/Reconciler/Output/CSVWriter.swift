import Foundation

/// Writes RFC 4180 CSV for reconciliation reports: UTF-8, CRLF line ends, a fixed column order
/// given by the header, fields quoted when they contain a comma, quote, CR or LF.
///
/// Text values that a spreadsheet would run as a formula (leading `=`, `+`, `-`, `@`, tab,
/// CR; OWASP "CSV injection") get a leading `'`; control and bidirectional characters are made visible
/// (`VisibleText`). Numeric columns keep `-5` or `2024-01-01`
/// as they are. Encoding is pure (`header()`, `row(_:)`); `write(...)` sends bytes to a `FileHandle`.
public struct CSVWriter: Sendable {
    /// The columns, in output order.
    public let columns: [CSVColumn]

    public init(columns: [CSVColumn]) {
        self.columns = columns
    }

    /// The header line, CRLF-terminated. Header names are escaped like text values.
    public func header() -> String {
        columns.map { Self.encodeField($0.name, kind: .text) }.joined(separator: ",") + "\r\n"
    }

    /// One row, CRLF-terminated, from values in column order.
    /// - Throws: `CSVWriterError` when the number of values differs from the number of columns.
    public func row(_ values: [String]) throws(CSVWriterError) -> String {
        guard values.count == columns.count else {
            throw CSVWriterError(expected: columns.count, got: values.count)
        }
        return zip(values, columns).map { Self.encodeField($0, kind: $1.kind) }.joined(separator: ",") + "\r\n"
    }

    /// One row, CRLF-terminated, from values keyed by column name; missing names become empty
    /// fields and names that are not columns are ignored.
    public func row(_ values: [String: String]) -> String {
        columns.map { Self.encodeField(values[$0.name] ?? "", kind: $0.kind) }.joined(separator: ",") + "\r\n"
    }

    /// The whole document (header, then rows) as a string.
    public func document(rows: some Sequence<[String]>) throws(CSVWriterError) -> String {
        var out = header()
        for values in rows { out += try row(values) }
        return out
    }

    /// Writes the header (if `includeHeader`) and the rows to `handle` as UTF-8, one write per row.
    /// - Throws: `CSVWriterError` for a row of the wrong width, or the file handle's write error.
    public func write(rows: some Sequence<[String]>, to handle: FileHandle, includeHeader: Bool = true) throws {
        if includeHeader { try handle.write(contentsOf: Data(header().utf8)) }
        for values in rows { try handle.write(contentsOf: Data(try row(values).utf8)) }
    }

    /// Encodes one field: neutralised (text columns, or numeric columns holding something that
    /// is not a number or date) and then quoted when needed.
    public static func encodeField(_ value: String, kind: CSVColumn.Kind) -> String {
        // Control and bidirectional characters shown, not obeyed (`VisibleText`); tab and line breaks are quoted.
        var field = VisibleText.neutralised(value, keeping: quotedControls)
        if isHostile(field) && (kind == .text || !looksNumeric(field)) {
            field = "'" + field
        }
        let needsQuotes = field.utf8.contains {
            $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 0x0D || $0 == 0x0A
        }
        guard needsQuotes else { return field }
        return "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// The controls a field keeps as they are: quoted, they are part of the value.
    static let quotedControls: Set<Unicode.Scalar> = ["\t", "\r", "\n"]

    /// A value a spreadsheet may interpret as a formula: it starts with `=`, `+`, `-`, `@`, tab or CR.
    static func isHostile(_ value: String) -> Bool {
        guard let first = value.utf8.first else { return false }
        return first == UInt8(ascii: "=") || first == UInt8(ascii: "+") || first == UInt8(ascii: "-")
            || first == UInt8(ascii: "@") || first == 0x09 || first == 0x0D
    }

    /// A plain decimal number (`-5`, `+3.25`, `1e-3`), which cannot start a formula. (Dates such
    /// as `2024-01-01` start with a digit, so they are never considered hostile in the first place.)
    static func looksNumeric(_ value: String) -> Bool {
        let bytes = Array(value.utf8)
        var index = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") { index += 1 }
        let digitsStart = index
        while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        var sawDigit = index > digitsStart
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            let fractionStart = index
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            sawDigit = sawDigit || index > fractionStart
        }
        guard sawDigit else { return false }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") {
                index += 1
            }
            let exponentStart = index
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            if index == exponentStart { return false }
        }
        return index == bytes.count
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
}
