import AppleReports
import CivilTime

/// tieout.csv: one row per key and cause (`TieOutRow`), amounts as decimals in the currency's minor unit, for a
/// spreadsheet (docs/tie-out.md, "Reading the files"). Text cells are neutralised against formulas by `CSVWriter`.
enum TieOutCSV {
    static let columns = [
        "period", "view", "day_or_month", "product_id", "country", "currency", "measure", "ledger_units",
        "ledger_amount", "apple_units", "apple_amount", "apple_currency", "difference", "cause", "detail",
    ]

    static let numericColumns: Set<String> = [
        "day_or_month", "ledger_units", "ledger_amount", "apple_units", "apple_amount", "difference",
    ]

    static func row(_ row: TieOutRow, period: String) -> [String] {
        let k = row.key
        return [
            period, k.view.rawValue, k.period, k.productId, k.country, k.currency, k.measure.rawValue,
            "\(row.ledgerUnits)", CurrencyFormat.format(milliunits: row.ledgerAmount, currency: k.currency),
            "\(row.appleUnits)", CurrencyFormat.format(milliunits: row.appleAmount, currency: k.appleCurrency),
            k.appleCurrency, row.difference.map { CurrencyFormat.format(milliunits: $0, currency: k.currency) } ?? "",
            k.cause.rawValue, row.detail,
        ]
    }

    static func document(_ result: TieOutResult) throws(CSVWriterError) -> String {
        let writer = CSVWriter(columns: columns.map { CSVColumn($0, numericColumns.contains($0) ? .numeric : .text) })
        return try writer.document(rows: result.rows.map { row($0, period: result.periodLabel) })
    }
}
