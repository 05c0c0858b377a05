import CivilTime
import Crypto
import Foundation

/// Reads an App Store Connect report file (gzip or plain TSV) into `AppleReportContents`: the kind from the header
/// line, every row typed and checked. The first problem stops the file (`AppleReportError`): nothing of it is stored.
public enum AppleReportParser {
    /// Reads and parses the file at `path`; `name` is how messages name it (default: the path).
    /// `date` (`YYYY-MM-DD`) is a Subscription report's day when its file name does not state it; other kinds ignore it.
    public static func parse(
        path: String,
        name: String? = nil,
        date: String? = nil
    ) throws(AppleReportError) -> AppleReportContents {
        let file = name ?? path
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw AppleReportError(
                file: file,
                code: .cannotOpen,
                problem: "cannot be read: \(error.localizedDescription)"
            )
        }
        return try parse(data: data, file: file, date: date)
    }

    /// Parses a file's bytes; `date` as `parse(path:name:date:)` says.
    public static func parse(
        data: Data,
        file: String,
        date: String? = nil
    ) throws(AppleReportError) -> AppleReportContents {
        let compressed = GzipDecoder.isGzip(data)
        var text = data
        if compressed {
            switch GzipDecoder.decompress(data) {
            case .success(let plain): text = plain
            case .failure(let failure): throw AppleReportError(file: file, code: .corruptGzip, problem: failure.message)
            }
        }
        let sha256 = SHA256.hash(data: text).map { String(format: "%02x", $0) }.joined()
        guard var string = String(data: text, encoding: .utf8) else {
            throw AppleReportError(file: file, code: .invalidUTF8, problem: "is not UTF-8 text (nor gzip)")
        }
        if string.hasPrefix("\u{FEFF}") { string.removeFirst() }
        let document = try AppleReportDocument(text: string, file: file)
        let rows = try typedRows(document, file: file)
        let day = document.kind == .subscription ? try subscriptionDay(file: file, date: date) : nil
        let period = period(rows, preamble: document.preamble, day: day)
        return AppleReportContents(
            file: file,
            kind: document.kind,
            sha256: sha256,
            compressed: compressed,
            rows: rows,
            periodStart: period?.start,
            periodEnd: period?.end,
            fiscalMonth: document.kind.isDaily ? nil : period.flatMap { fiscalMonth($0.end) }
        )
    }

    private static func typedRows(
        _ document: AppleReportDocument,
        file: String
    ) throws(AppleReportError) -> AppleReportContents.Rows {
        func read<Row>(
            _ make: (AppleReportRowReader) throws(AppleReportError) -> Row
        ) throws(AppleReportError) -> [Row] {
            var rows: [Row] = []
            for row in document.rows {
                rows.append(
                    try make(
                        AppleReportRowReader(file: file, line: row.line, fields: row.fields, columns: document.columns)
                    )
                )
            }
            return rows
        }
        switch document.kind {
        case .subscriber: return .subscriber(try read(SubscriberReportRow.init))
        case .financial: return .financial(try read(FinancialReportRow.init))
        case .financeDetail: return .financeDetail(try read(FinanceDetailReportRow.init))
        case .subscriptionEvent: return .subscriptionEvent(try read(SubscriptionEventReportRow.init))
        case .subscription: return .subscription(try read(SubscriptionReportRow.init))
        }
    }

    /// The first and last day of the rows; a detailed Financial report's preamble `Start Date` / `End Date` win; a
    /// Subscription report's day is `day` (it has no date column).
    static func period(
        _ rows: AppleReportContents.Rows,
        preamble: [String: String],
        day: String? = nil
    ) -> (start: String, end: String)? {
        let days: [(String, String)]
        switch rows {
        case .subscriber(let rows): days = rows.map { ($0.eventDate, $0.eventDate) }
        case .subscriptionEvent(let rows): days = rows.map { ($0.eventDate, $0.eventDate) }
        case .subscription: return day.map { ($0, $0) }
        case .financial(let rows): days = rows.map { ($0.startDate, $0.endDate) }
        case .financeDetail(let rows):
            if let start = preamble["start date"].flatMap(AppleReportValue.isoDate),
                let end = preamble["end date"].flatMap(AppleReportValue.isoDate)
            {
                return (start, end)
            }
            days = rows.map { ($0.transactionDate, $0.transactionDate) }
        }
        guard let start = days.map(\.0).min(), let end = days.map(\.1).max() else { return nil }
        return (start, end)
    }

    /// The day of a Subscription report: `date` (`YYYY-MM-DD`, the request's or `--date`) when given, else the one
    /// Apple's file name states (`Subscription_<vendor>_<YYYYMMDD>.txt`, optionally `.gz`; docs/apple-reports.md,
    /// "The Subscription report's day").
    static func subscriptionDay(file: String, date: String?) throws(AppleReportError) -> String {
        if let date {
            guard let day = PacificDay(date) else {
                throw AppleReportError(
                    file: file,
                    code: .missingDate,
                    problem: "the date \(AppleReportRowReader.quoted(Substring(date))) is not a day (YYYY-MM-DD)"
                )
            }
            return day.description
        }
        if let day = dayInFileName(file) { return day }
        throw AppleReportError(
            file: file,
            code: .missingDate,
            problem: "is a Subscription report, which has no date column, and its name is not Apple's "
                + "Subscription_<vendor>_<YYYYMMDD>.txt(.gz): give its day with --date YYYY-MM-DD"
        )
    }

    /// `2026-11-20` from `.../Subscription_85012345_20261120.txt.gz`; nil for any other name.
    static func dayInFileName(_ file: String) -> String? {
        var name = Substring(file.split(separator: "/").last ?? "")
        if name.hasSuffix(".gz") { name = name.dropLast(3) }
        guard name.hasSuffix(".txt") else { return nil }
        let parts = name.dropLast(4).split(separator: "_", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "Subscription", !parts[1].isEmpty, parts[1].allSatisfy(\.isASCII),
            parts[1].allSatisfy(\.isNumber), parts[2].count == 8, parts[2].allSatisfy(\.isASCII),
            parts[2].allSatisfy(\.isNumber)
        else { return nil }
        let digits = parts[2]
        let text = "\(digits.prefix(4))-\(digits.dropFirst(4).prefix(2))-\(digits.suffix(2))"
        return AppleReportValue.isoDate(text)
    }

    /// `YYYY-MM` of the Apple fiscal month holding the period's last day (`AppleFiscalMonth`): a consolidated report
    /// covers exactly one; a detailed report's transaction dates can start before it, its settlement dates do not.
    static func fiscalMonth(_ end: String) -> String? {
        PacificDay(end).map { AppleFiscalMonth(containing: $0).name }
    }
}
