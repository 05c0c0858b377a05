/// One row of a result, read by column name or index. Values are copied out of libpq when the
/// result arrives, so rows stay valid after the connection moves on.
public struct PostgresRow: Sendable {
    let storage: PostgresResultStorage
    let storageIndex: Int
    /// Index of this row in its result (for `forEachRow`, the running row number).
    public let index: Int

    init(storage: PostgresResultStorage, index: Int, displayIndex: Int? = nil) {
        self.storage = storage
        self.storageIndex = index
        self.index = displayIndex ?? index
    }

    /// Column names, in order.
    public var columnNames: [String] { storage.columnNames }

    /// The cell at column `column` (0-based); out-of-range indexes yield an error on decode.
    public func cell(_ column: Int) throws -> PostgresCell {
        guard column >= 0, column < storage.columnNames.count else {
            throw PostgresError(
                code: .decoding,
                message: "row \(index): column index \(column) out of range (\(storage.columnNames.count) columns)"
            )
        }
        return PostgresCell(
            text: storage.values[storageIndex * storage.columnNames.count + column],
            columnName: storage.columnNames[column],
            columnIndex: column,
            rowIndex: index,
            typeOID: storage.typeOIDs[column]
        )
    }

    /// The cell of the column named `column` (first match if duplicated).
    public func cell(_ column: String) throws -> PostgresCell {
        guard let i = storage.columnIndex[column] else {
            throw PostgresError(
                code: .decoding,
                message:
                    "row \(index): no column named \"\(column)\" (columns: \(storage.columnNames.joined(separator: ", ")))"
            )
        }
        return try cell(i)
    }

    /// Decodes column `column` as `T`; use an optional `T` for nullable columns.
    public func decode<T: PostgresDecodable>(_ column: String, as type: T.Type = T.self) throws -> T {
        try T.decode(from: cell(column))
    }

    /// Decodes the column at index `column` as `T`.
    public func decode<T: PostgresDecodable>(_ column: Int, as type: T.Type = T.self) throws -> T {
        try T.decode(from: cell(column))
    }

    /// The raw text value of a column (nil for NULL or a missing column).
    public subscript(column: String) -> String? { try? cell(column).text }
    /// The raw text value at a column index (nil for NULL or out of range).
    public subscript(column: Int) -> String? { try? cell(column).text }
}

/// Immutable, shared storage of one result's values (text format; nil = NULL).
final class PostgresResultStorage: Sendable {
    let columns: PostgresColumns
    let values: [String?]

    var columnNames: [String] { columns.names }
    var typeOIDs: [UInt32] { columns.typeOIDs }
    var columnIndex: [String: Int] { columns.index }

    init(columns: PostgresColumns, values: [String?]) {
        self.columns = columns
        self.values = values
    }

    convenience init(columnNames: [String], typeOIDs: [UInt32], values: [String?]) {
        self.init(columns: PostgresColumns(names: columnNames, typeOIDs: typeOIDs), values: values)
    }
}
