import Foundation
import Postgres

/// Writes trends.csv and trends.html of the last `days` days of `trend_snapshots` into a directory (the
/// report directory after each run, or `report --trends --out DIR`). Each file is written to a temporary
/// name in the same directory, fsynced and renamed over the old one, so a reader never sees half a file.
public struct TrendsReport {
    public static let defaultDays = 90
    public static let csvName = "trends.csv"
    public static let htmlName = "trends.html"

    public let connection: PostgresConnection

    public init(connection: PostgresConnection) {
        self.connection = connection
    }

    /// Writes both files; returns the number of CSV rows.
    /// - Throws: `ReportError`: a database failure, or a directory that is not writable or full (naming the path).
    @discardableResult
    public func write(directory: String, days: Int = TrendsReport.defaultDays) throws(ReportError) -> Int {
        let rows: [TrendRow]
        do {
            rows = try TrendRow.load(connection, days: days)
        } catch {
            throw ReportError(.database, "reading trend_snapshots: \(error)")
        }
        try Self.write(rows: rows, days: days, directory: directory)
        return rows.count
    }

    static func write(rows: [TrendRow], days: Int, directory: String) throws(ReportError) {
        let csv: String
        do {
            csv = try TrendsCSV.document(rows)
        } catch {
            throw ReportError(.encoding, path: "\(directory)/\(csvName)", "cannot encode trends.csv: \(error)")
        }
        try AtomicFiles.makeDirectories(directory)
        try AtomicFiles.replace("\(directory)/\(csvName)", Data(csv.utf8))
        try AtomicFiles.replace("\(directory)/\(htmlName)", Data(TrendsHTML.render(rows: rows, days: days).utf8))
        AtomicFiles.syncDirectory(directory)
    }
}
