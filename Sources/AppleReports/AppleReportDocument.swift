import Foundation

/// A report file's text cut into its parts: the preamble (`Key<TAB>value` lines some Financial reports start with),
/// the header line, and the data rows, with blank lines, Apple's `Total_...` trailer lines and the detailed Financial
/// report's per-country summary left out of the rows. Apple's own `Total_Rows` is checked against the rows read.
struct AppleReportDocument {
    /// One data row: its 1-based line and its tab-separated fields.
    struct Row {
        let line: Int
        let fields: [Substring]
    }

    let kind: AppleReportKind
    let columns: AppleReportColumns
    /// Preamble values by lower-cased key (`start date`, `end date`, `vendor name`).
    let preamble: [String: String]
    let rows: [Row]

    init(text: String, file: String) throws(AppleReportError) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.last == "\r" ? line.dropLast() : line
        }
        var preamble: [String: String] = [:]
        var headerIndex: Int?
        for (index, line) in lines.enumerated() where !line.allSatisfy(\.isWhitespace) {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            if fields.count > 2 {
                headerIndex = index
                break
            }
            let key = AppleReportColumns.key(String(fields[0]))
            preamble[key] = fields.count == 2 ? fields[1].trimmingCharacters(in: .whitespaces) : ""
        }
        guard let headerIndex else {
            throw AppleReportError(file: file, code: .unknownHeader, problem: Self.unknownHeader("no header line"))
        }
        let names = lines[headerIndex].split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        guard let kind = AppleReportKind.recognise(names) else {
            throw AppleReportError(
                file: file,
                code: .unknownHeader,
                line: headerIndex + 1,
                problem: Self.unknownHeader("the header (\(names.prefix(4).joined(separator: ", ")), ...)")
            )
        }
        let columns = try AppleReportColumns(names: names, line: headerIndex + 1, file: file)
        try columns.require(Self.requiredColumns(kind), kind: kind, file: file)
        self.kind = kind
        self.columns = columns
        self.preamble = preamble
        rows = try Self.dataRows(lines, after: headerIndex, header: lines[headerIndex], file: file)
    }

    static func unknownHeader(_ what: String) -> String {
        "\(what) is not that of a report this command reads: a Subscriber report, Subscription Event report or "
            + "Subscription report (Sales and Trends) or a Financial report (FINANCIAL or FINANCE_DETAIL) as a TSV file, gzip or plain"
    }

    static func requiredColumns(_ kind: AppleReportKind) -> [String] {
        switch kind {
        case .subscriber: SubscriberReportRow.requiredColumns
        case .financial: FinancialReportRow.requiredColumns
        case .financeDetail: FinanceDetailReportRow.requiredColumns
        case .subscriptionEvent: SubscriptionEventReportRow.requiredColumns
        case .subscription: SubscriptionReportRow.requiredColumns
        }
    }

    /// The data rows after the header; each must have the header's number of fields.
    private static func dataRows(
        _ lines: [Substring],
        after headerIndex: Int,
        header: Substring,
        file: String
    ) throws(AppleReportError) -> [Row] {
        let width = header.split(separator: "\t", omittingEmptySubsequences: false).count
        var rows: [Row] = []
        var sectionRows = 0
        for index in (headerIndex + 1)..<lines.count {
            let line = lines[index]
            if line.allSatisfy(\.isWhitespace) { continue }
            if line == header {  // a consolidated file may repeat the header for another section
                sectionRows = 0
                continue
            }
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            let first = AppleReportColumns.key(String(fields[0]))
            if first.hasPrefix("total_") {
                try checkTotal(fields, first: first, rows: sectionRows, line: index + 1, file: file)
                continue
            }
            // The detailed report ends with a summary per country (Country Of Sale, currency, quantity, share).
            if first == "country of sale" && fields.count < width { break }
            guard fields.count == width else {
                throw AppleReportError(
                    file: file,
                    code: .wrongFieldCount,
                    line: index + 1,
                    problem: "has \(fields.count) tab-separated fields, the header has \(width)"
                )
            }
            rows.append(Row(line: index + 1, fields: fields))
            sectionRows += 1
        }
        return rows
    }

    /// `Total_Rows<TAB>N` must count the rows of its section; other totals are Apple's sums, not checked here.
    private static func checkTotal(
        _ fields: [Substring],
        first: String,
        rows: Int,
        line: Int,
        file: String
    ) throws(AppleReportError) {
        guard first == "total_rows", fields.count >= 2 else { return }
        let stated = fields[1].trimmingCharacters(in: .whitespaces)
        guard Int(stated) == rows else {
            throw AppleReportError(
                file: file,
                code: .totalMismatch,
                line: line,
                column: "Total_Rows",
                problem: "Apple states \(AppleReportRowReader.quoted(Substring(stated))) rows, the file holds \(rows)"
            )
        }
    }
}
