import CivilTime
import Crypto
import Foundation

/// Reads an App Store Connect report file (gzip or plain TSV) into `AppleReportContents`: the kind from the header
/// line, every row typed and checked. The first problem stops the file (`AppleReportError`): nothing of it is stored.
public enum AppleReportParser {
    /// Reads and parses the file at `path`; `name` is how messages name it (default: the path).
    public static func parse(path: String, name: String? = nil) throws(AppleReportError) -> AppleReportContents {
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
        return try parse(data: data, file: file)
    }

    /// Parses a file's bytes.
    public static func parse(data: Data, file: String) throws(AppleReportError) -> AppleReportContents {
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
        let period = period(rows, preamble: document.preamble)
        return AppleReportContents(
            file: file,
            kind: document.kind,
            sha256: sha256,
            compressed: compressed,
            rows: rows,
            periodStart: period?.start,
            periodEnd: period?.end,
            fiscalMonth: document.kind == .subscriber ? nil : period.flatMap { fiscalMonth($0.end) }
        )
    }

    private static func typedRows(
        _ document: AppleReportDocument,
        file: String
    ) throws(AppleReportError) -> AppleReportContents.Rows {
        func readers() -> [AppleReportRowReader] {
            document.rows.map {
                AppleReportRowReader(file: file, line: $0.line, fields: $0.fields, columns: document.columns)
            }
        }
        switch document.kind {
        case .subscriber:
            var rows: [SubscriberReportRow] = []
            for reader in readers() { rows.append(try SubscriberReportRow(reader)) }
            return .subscriber(rows)
        case .financial:
            var rows: [FinancialReportRow] = []
            for reader in readers() { rows.append(try FinancialReportRow(reader)) }
            return .financial(rows)
        case .financeDetail:
            var rows: [FinanceDetailReportRow] = []
            for reader in readers() { rows.append(try FinanceDetailReportRow(reader)) }
            return .financeDetail(rows)
        }
    }

    /// The first and last day of the rows; a detailed Financial report's preamble `Start Date` / `End Date` win.
    static func period(
        _ rows: AppleReportContents.Rows,
        preamble: [String: String]
    ) -> (start: String, end: String)? {
        let days: [(String, String)]
        switch rows {
        case .subscriber(let rows): days = rows.map { ($0.eventDate, $0.eventDate) }
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

    /// `YYYY-MM` of the Apple fiscal month holding the period's last day (`AppleFiscalMonth`): a consolidated report
    /// covers exactly one; a detailed report's transaction dates can start before it, its settlement dates do not.
    static func fiscalMonth(_ end: String) -> String? {
        PacificDay(end).map { AppleFiscalMonth(containing: $0).name }
    }
}
