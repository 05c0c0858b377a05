import Foundation

/// The files of one report folder, rendered from `ReportData`: summary.json, changes.csv,
/// transactions.csv, errors.csv, money.csv,
/// money-storefronts.csv and report.html. Pure (no I/O), so tests can read the bytes directly.
public enum ReportFiles {
    /// File names, in the order they are written.
    public static let names = [
        "summary.json", "changes.csv", "transactions.csv", "errors.csv", "money.csv", "money-storefronts.csv",
        "report.html",
    ]

    /// Renders every file.
    /// - Throws: `ReportError.Code.encoding` if a value cannot be encoded (a bug: nothing is written then).
    public static func render(_ data: ReportData) throws(ReportError) -> [(name: String, data: Data)] {
        let summary = RunSummary(data: data)
        do {
            return [
                ("summary.json", try summary.jsonData()),
                (
                    "changes.csv",
                    try csv(
                        ReportTables.changeColumns,
                        numeric: ReportTables.changeNumericColumns,
                        rows: ReportTables.changeRows(data)
                    )
                ),
                (
                    "transactions.csv",
                    try csv(
                        ReportTables.transactionColumns,
                        numeric: ReportTables.transactionNumericColumns,
                        rows: ReportTables.transactionRows(data)
                    )
                ),
                (
                    "errors.csv",
                    try csv(
                        ReportTables.errorColumns,
                        numeric: ReportTables.errorNumericColumns,
                        rows: ReportTables.errorRows(data)
                    )
                ),
                ("money.csv", try moneyCSV(summary.money)),
                ("money-storefronts.csv", try storefrontMoneyCSV(summary.money)),
                ("report.html", Data(ReportHTML.render(data: data, summary: summary).utf8)),
            ]
        } catch {
            throw ReportError(
                .encoding,
                path: data.run.folderName,
                "cannot encode the report of run \(data.run.id): \(error)"
            )
        }
    }

    /// money.csv of `money` (`MoneyTables`).
    static func moneyCSV(_ money: MoneySummary) throws(ReportError) -> Data {
        do {
            return try csv(MoneyTables.columns, numeric: MoneyTables.numericColumns, rows: MoneyTables.rows(money))
        } catch {
            throw ReportError(.encoding, path: "money.csv", "cannot encode money.csv: \(error)")
        }
    }

    /// money-storefronts.csv of `money` (`StorefrontMoneyTables`).
    static func storefrontMoneyCSV(_ money: MoneySummary) throws(ReportError) -> Data {
        do {
            return try csv(
                StorefrontMoneyTables.columns,
                numeric: StorefrontMoneyTables.numericColumns,
                rows: StorefrontMoneyTables.rows(money)
            )
        } catch {
            throw ReportError(.encoding, path: "money-storefronts.csv", "cannot encode money-storefronts.csv: \(error)")
        }
    }

    /// RFC 4180 CSV through `CSVWriter` (formula neutralisation of text columns included).
    static func csv(_ columns: [String], numeric: Set<String>, rows: [[String]]) throws -> Data {
        let writer = CSVWriter(columns: columns.map { CSVColumn($0, numeric.contains($0) ? .numeric : .text) })
        return Data(try writer.document(rows: rows).utf8)
    }
}
