import Foundation

/// Exchange rates the user supplies (`--fx-rates FILE`) to convert each currency's money into one reporting
/// currency (docs/reports.md, "Converted totals"). Never Apple's rates, never fetched: the file is the only
/// source, and figures converted with it are labelled so.
///
/// The file is CSV, UTF-8, one `CODE,RATE` per line: `RATE` units of the reporting currency for one unit of
/// `CODE` (a plain decimal, `0.92`). Optional lines: a header `currency,rate`, `reporting_currency,CODE`, blank
/// lines and `#` comments.
public struct FXRates: Sendable, Equatable {
    /// ISO 4217 code everything is converted to.
    public var reportingCurrency: String
    /// Currency -> units of the reporting currency per unit, as written in the file; the reporting currency
    /// itself is 1.
    public var rates: [String: Decimal]
    /// The file's name as given, written beside the converted figures.
    public var file: String

    public init(reportingCurrency: String, rates: [String: Decimal], file: String) {
        self.reportingCurrency = reportingCurrency
        self.rates = rates
        self.rates[reportingCurrency] = 1
        self.file = file
    }

    /// Reads `path`; `reportingCurrency` (`--reporting-currency`) names the reporting currency when the file
    /// does not, and must agree with it when it does.
    /// - Throws: `UsageError` (exit 64) naming the file and, for bad content, the line.
    public static func load(path: String, reportingCurrency: String?) throws(UsageError) -> FXRates {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw UsageError("--fx-rates \(path): cannot read the file: \(error.localizedDescription)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw UsageError("--fx-rates \(path): not UTF-8 text")
        }
        return try parse(text, file: path, reportingCurrency: reportingCurrency)
    }

    /// Parses the file's `text` (see the type's documentation).
    public static func parse(
        _ text: String,
        file: String,
        reportingCurrency flag: String?
    ) throws(UsageError)
        -> FXRates
    {
        func fail(_ line: Int?, _ message: String) -> UsageError {
            UsageError("--fx-rates \(file)" + (line.map { " line \($0)" } ?? "") + ": " + message)
        }
        if let flag, !isCode(flag) {
            throw UsageError("--reporting-currency must be an ISO 4217 code like EUR, got \(flag)")
        }
        var named: String?
        var rates: [String: Decimal] = [:]
        var lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).map(String.init)
        if let first = lines.first, first.hasPrefix("\u{FEFF}") { lines[0] = String(first.dropFirst()) }
        for (index, raw) in lines.enumerated() {
            let number = index + 1
            let line = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let cells = line.split(separator: ",", omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 2 else {
                throw fail(number, "expected two columns `currency,rate`, got \(cells.count): \(line)")
            }
            let (code, value) = (cells[0], cells[1])
            if code.lowercased() == "currency" && value.lowercased() == "rate" { continue }
            if code.lowercased() == "reporting_currency" {
                guard isCode(value) else {
                    throw fail(number, "reporting_currency must be an ISO 4217 code, got \(value)")
                }
                guard named == nil else { throw fail(number, "reporting_currency given twice") }
                named = value
                continue
            }
            guard isCode(code) else { throw fail(number, "\(code) is not an ISO 4217 code (three capital letters)") }
            guard rates[code] == nil else { throw fail(number, "\(code) given twice") }
            guard value.range(of: #"^[0-9]{1,12}(\.[0-9]{1,12})?$"#, options: .regularExpression) != nil,
                let rate = Decimal(string: value, locale: Locale(identifier: "en_US_POSIX")), rate > 0
            else {
                throw fail(number, "the rate of \(code) must be a positive decimal number like 0.92, got \(value)")
            }
            rates[code] = rate
        }
        if let named, let flag, named != flag {
            throw fail(nil, "names reporting currency \(named) but --reporting-currency is \(flag)")
        }
        guard let reporting = named ?? flag else {
            throw fail(nil, "no reporting currency: add a line `reporting_currency,EUR` or pass --reporting-currency")
        }
        if let own = rates[reporting], own != 1 {
            throw fail(nil, "the rate of the reporting currency \(reporting) must be 1, got \(own)")
        }
        guard !rates.filter({ $0.key != reporting }).isEmpty else { throw fail(nil, "no rate in the file") }
        return FXRates(reportingCurrency: reporting, rates: rates, file: file)
    }

    static func isCode(_ text: String) -> Bool {
        text.range(of: "^[A-Z]{3}$", options: .regularExpression) != nil
    }

    /// `milliunits` of `currency` in milliunits of the reporting currency, rounded half away from zero to its
    /// minor unit (`CurrencyFormat.rounded`); nil without a rate for `currency`.
    public func convert(milliunits: Int64, from currency: String) -> Int64? {
        guard let rate = rates[currency] else { return nil }
        return CurrencyFormat.rounded(Decimal(milliunits) * rate, currency: reportingCurrency)
    }
}
