import Foundation
import Postgres

/// Stores parsed report files in PostgreSQL (`sql/021_apple_reports.sql`, `sql/023_subscription_reports.sql`): each
/// file in one transaction, once.
///
/// The file row is inserted first with `ON CONFLICT DO NOTHING`: a checksum already stored (an earlier import, or
/// another import committing the same file meanwhile), or a Subscription or Subscription Event report of a day
/// already stored (one file a day, whatever its bytes), loads nothing and reports the earlier import.
public struct AppleReportStore {
    /// How one file ended.
    public enum Outcome: Sendable, Equatable {
        /// Stored now: the file's id and its rows.
        case imported(fileId: Int64, rows: Int)
        /// A file with the same checksum was stored before: nothing loaded.
        case alreadyImported(fileId: Int64, fileName: String, importedAt: Date)
    }

    /// Rows per INSERT statement.
    static let batchSize = 1000

    let connection: PostgresConnection

    public init(connection: PostgresConnection) {
        self.connection = connection
    }

    /// Stores `contents` whole or not at all. `fileName` is what `apple_report_files.file_name` keeps.
    public func store(
        _ contents: AppleReportContents,
        fileName: String,
        vendorNumber: String?
    ) throws -> Outcome {
        try connection.transaction { conn in
            let inserted = try conn.queryFirst(
                """
                INSERT INTO apple_report_files (kind, file_name, sha256, compressed, period_start, period_end,
                                                fiscal_month, vendor_number, row_count)
                VALUES ($1, $2, $3, $4, $5::date, $6::date, $7, $8, $9)
                ON CONFLICT DO NOTHING
                RETURNING id
                """,
                [
                    contents.kind.rawValue, fileName, contents.sha256, contents.compressed, contents.periodStart,
                    contents.periodEnd, contents.fiscalMonth, vendorNumber, contents.rows.count,
                ]
            )
            guard let fileId = try inserted?.decode("id", as: Int64.self) else {
                let earlier = try conn.queryFirst(
                    """
                    SELECT id, file_name, imported_at FROM apple_report_files
                    WHERE sha256 = $1 OR (kind = $2 AND kind IN ('subscription', 'subscription_event')
                                          AND period_start = $3::date)
                    ORDER BY sha256 = $1 DESC LIMIT 1
                    """,
                    [contents.sha256, contents.kind.rawValue, contents.periodStart]
                )
                guard let earlier else {
                    throw PostgresError(code: .transaction, message: "apple_report_files: conflicting file not found")
                }
                return .alreadyImported(
                    fileId: try earlier.decode("id", as: Int64.self),
                    fileName: try earlier.decode("file_name", as: String.self),
                    importedAt: try earlier.decode("imported_at", as: Date.self)
                )
            }
            try insertRows(contents.rows, fileId: fileId, conn)
            return .imported(fileId: fileId, rows: contents.rows.count)
        }
    }

    private func insertRows(_ rows: AppleReportContents.Rows, fileId: Int64, _ conn: PostgresConnection) throws {
        switch rows {
        case .subscriber(let rows):
            try insert(rows, into: "apple_subscriber_events", fileId: fileId, conn, Self.subscriberColumns)
        case .financial(let rows):
            try insert(rows, into: "apple_financial_rows", fileId: fileId, conn, Self.financialColumns)
        case .financeDetail(let rows):
            try insert(rows, into: "apple_finance_detail_rows", fileId: fileId, conn, Self.financeDetailColumns)
        case .subscriptionEvent(let rows):
            try insert(rows, into: "apple_subscription_event_rows", fileId: fileId, conn, Self.subscriptionEventColumns)
        case .subscription(let rows):
            try insert(rows, into: "apple_subscription_rows", fileId: fileId, conn, Self.subscriptionColumns)
        }
    }

    /// One multi-row `INSERT ... SELECT $1, * FROM unnest(...)` per batch of `rows`.
    private func insert<Row>(
        _ rows: [Row],
        into table: String,
        fileId: Int64,
        _ conn: PostgresConnection,
        _ columns: ([Row]) -> [AppleReportStoredColumn]
    ) throws {
        var start = 0
        while start < rows.count {
            let batch = Array(rows[start..<min(start + Self.batchSize, rows.count)])
            let stored = columns(batch)
            let names = stored.map(\.name).joined(separator: ", ")
            let arrays = stored.enumerated().map { "$\($0.offset + 2)::\($0.element.type)[]" }.joined(separator: ", ")
            let parameters: [(any PostgresEncodable)?] = [fileId] + stored.map(\.values)
            try conn.execute("INSERT INTO \(table) (file_id, \(names)) SELECT $1, * FROM unnest(\(arrays))", parameters)
            start += Self.batchSize
        }
    }
}

/// One column of a batch of rows, bound as one array parameter.
struct AppleReportStoredColumn {
    let name: String
    /// The SQL element type the array is cast to (`text`, `bigint`, `integer`, `boolean`, `date`).
    let type: String
    let values: (any PostgresEncodable)?

    init<Row, Value: PostgresEncodable>(_ name: String, _ type: String, _ rows: [Row], _ value: (Row) -> Value) {
        self.name = name
        self.type = type
        values = rows.map(value)
    }
}
