import CivilTime
import Foundation
import ReceiptDomain

/// One data row of a report, read field by field into typed values; every failure is an `AppleReportError` naming
/// the file, the row's line and Apple's column name.
struct AppleReportRowReader {
    /// Other spellings Apple uses for a column (docs/apple-reports.md).
    static let aliases: [String: [String]] = [
        "Sale or Return": ["Sales or Return"],
        "Country of Sale": ["Country Of Sale"],
        "Subscription Offer Name": ["Promotional Offer Name"],
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
        try parsed(column, try required(column), "a decimal amount with at most 3 decimals (like -4.99)") {
            AppleReportValue.milliunits($0)
        }
    }

    /// A whole number (units, quantity), negative for a refund.
    func integer(_ column: String) throws(AppleReportError) -> Int32 {
        try parsed(column, try required(column), "a whole number") { Int32($0) }
    }

    /// A whole number, nil when the column is absent or the field empty.
    func optionalInteger(_ column: String) throws(AppleReportError) -> Int32? {
        guard let text = try optional(column) else { return nil }
        return try parsed(column, text, "a whole number") { Int32($0) }
    }

    /// A count column of the Subscription report: nil when the header lacks it, 0 when the field is blank.
    func count(_ column: String) throws(AppleReportError) -> Int32? {
        guard columns.position(column, aliases: Self.aliases[column] ?? []) != nil else { return nil }
        return try optionalInteger(column) ?? 0
    }

    /// An ISO 4217 currency code.
    func currency(_ column: String) throws(AppleReportError) -> String {
        try parsed(column, try required(column), "an ISO 4217 code like USD") {
            ISO4217Currency.codes.contains($0) ? $0 : nil
        }
    }

    /// A two-letter country or region code, as Apple writes it.
    func country(_ column: String) throws(AppleReportError) -> String {
        try parsed(column, try required(column), "a two-letter code like US") {
            $0.utf8.count == 2 && $0.utf8.allSatisfy({ (65...90).contains($0) }) ? $0 : nil
        }
    }

    /// A date as `YYYY-MM-DD`; Apple writes `YYYY-MM-DD` or `MM/DD/YYYY`.
    func date(_ column: String) throws(AppleReportError) -> String {
        guard let date = try optionalDate(column) else { throw error(.missingValue, column, "is empty") }
        return date
    }

    /// Like `date`, nil when empty.
    func optionalDate(_ column: String) throws(AppleReportError) -> String? {
        guard let text = try optional(column) else { return nil }
        return try parsed(column, text, "a date (YYYY-MM-DD or MM/DD/YYYY)") { AppleReportValue.isoDate($0) }
    }

    /// `text` of `column` read by `parse`; when it does not read, an invalid-value error saying it is not `expected`.
    private func parsed<Value>(
        _ column: String,
        _ text: String,
        _ expected: String,
        _ parse: (String) -> Value?
    ) throws(AppleReportError) -> Value {
        guard let value = parse(text) else {
            throw error(.invalidValue, column, "\(Self.quoted(Substring(text))) is not \(expected)")
        }
        return value
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
