/// The first rows of one report table (what report.html shows) and the table's total row count.
///
/// Lets the page be rendered while the full table is streamed to its CSV file and never held in memory.
public struct ReportRowSample: Sendable, Equatable {
    /// Rows in table order; only the first `ReportHTML.tableRowLimit` are shown.
    public var rows: [[String]]
    /// Rows in the whole table (the CSV file).
    public var total: Int

    /// A sample of `rows` with their count as the total (the whole table in memory).
    public init(rows: [[String]]) {
        self.rows = rows
        self.total = rows.count
    }

    /// An empty sample that keeps at most `ReportHTML.tableRowLimit` rows of a streamed table.
    public init() {
        self.rows = []
        self.total = 0
    }

    /// Counts one streamed row, keeping it only while fewer than `ReportHTML.tableRowLimit` are kept.
    public mutating func add(_ row: [String]) {
        total += 1
        if rows.count < ReportHTML.tableRowLimit { rows.append(row) }
    }
}
