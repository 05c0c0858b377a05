import CivilTime
import Foundation

/// One data row of a report, read field by field into typed values; every failure is an `AppleReportError` naming
/// the file, the row's line and Apple's column name.
struct AppleReportRowReader {
    /// Other spellings Apple uses for a column (docs/apple-reports.md).
    static let aliases: [String: [String]] = [
        "Sale or Return": ["Sales or Return"],
        "Country of Sale": ["Country Of Sale"],
    ]

    let file: String
    let line: Int
    let fields: [Substring]
    let columns: AppleReportColumns

    private func error(_ code: AppleReportError.Code, _ column: String, _ problem: String) -> AppleReportError {
        AppleReportError(file: file, code: code, line: line, column: column, problem: problem)
    }

    /// A short, quoted echo of a bad value (at most 40 characters).
    static func quoted(_ value: Substring) -> String {
        value.count > 40 ? "\"\(value.prefix(40))...\"" : "\"\(value)\""
    }

    /// The trimmed field, nil when the column is absent from the header or the field is empty.
    func optional(_ column: String) throws(AppleReportError) -> String? {
        guard let position = columns.position(column, aliases: Self.aliases[column] ?? []) else { return nil }
        let value = fields[position].trimmingCharacters(in: .whitespaces)
        guard !value.isEmpty else { return nil }
        guard !value.utf8.contains(0) else { throw error(.unstorableValue, column, "holds a NUL character") }
        return value
    }

    /// The trimmed field; empty is `.missingValue`.
    func required(_ column: String) throws(AppleReportError) -> String {
        guard let value = try optional(column) else { throw error(.missingValue, column, "is empty") }
        return value
    }

    /// A decimal amount in thousandths of its currency (`-4.99` is -4990).
    func milliunits(_ column: String) throws(AppleReportError) -> Int64 {
        let text = try required(column)
        guard let value = AppleReportValue.milliunits(text) else {
            throw error(
                .invalidValue,
                column,
                "\(Self.quoted(Substring(text))) is not a decimal amount with at most 3 decimals (like -4.99)"
            )
        }
        return value
    }

    /// A whole number (units, quantity), negative for a refund.
    func integer(_ column: String) throws(AppleReportError) -> Int32 {
        let text = try required(column)
        guard let value = Int32(text) else {
            throw error(.invalidValue, column, "\(Self.quoted(Substring(text))) is not a whole number")
        }
        return value
    }

    /// An ISO 4217 currency code.
    func currency(_ column: String) throws(AppleReportError) -> String {
        let text = try required(column)
        guard ISO4217Currency.codes.contains(text) else {
            throw error(.invalidValue, column, "\(Self.quoted(Substring(text))) is not an ISO 4217 code like USD")
        }
        return text
    }

    /// A two-letter country or region code, as Apple writes it.
    func country(_ column: String) throws(AppleReportError) -> String {
        let text = try required(column)
        guard text.utf8.count == 2, text.utf8.allSatisfy({ (65...90).contains($0) }) else {
            throw error(.invalidValue, column, "\(Self.quoted(Substring(text))) is not a two-letter code like US")
        }
        return text
    }

    /// A date as `YYYY-MM-DD`; Apple writes `YYYY-MM-DD` or `MM/DD/YYYY`.
    func date(_ column: String) throws(AppleReportError) -> String {
        guard let date = try optionalDate(column) else { throw error(.missingValue, column, "is empty") }
        return date
    }

    /// Like `date`, nil when empty.
    func optionalDate(_ column: String) throws(AppleReportError) -> String? {
        guard let text = try optional(column) else { return nil }
        guard let date = AppleReportValue.isoDate(text) else {
            throw error(
                .invalidValue,
                column,
                "\(Self.quoted(Substring(text))) is not a date (YYYY-MM-DD or MM/DD/YYYY)"
            )
        }
        return date
    }

    /// Apple's "Yes" or blank.
    func flag(_ column: String) throws(AppleReportError) -> Bool {
        guard let text = try optional(column) else { return false }
        switch text.lowercased() {
        case "yes": return true
        case "no": return false
        default: throw error(.invalidValue, column, "\(Self.quoted(Substring(text))) is neither Yes nor blank")
        }
    }

    /// `S` (sale) or `R` (return: a refund).
    func saleOrReturn(_ column: String) throws(AppleReportError) -> AppleSaleOrReturn {
        let text = try required(column)
        guard let value = AppleSaleOrReturn(rawValue: text) else {
            throw error(.invalidValue, column, "\(Self.quoted(Substring(text))) is neither S (sale) nor R (return)")
        }
        return value
    }
}
