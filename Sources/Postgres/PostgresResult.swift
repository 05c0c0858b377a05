/// The outcome of one statement: its rows (possibly none), the command tag and the number of
/// rows affected by INSERT/UPDATE/DELETE (or returned by SELECT).
public struct PostgresResult: Sendable, RandomAccessCollection {
    let storage: PostgresResultStorage
    /// e.g. "INSERT 0 3", "UPDATE 2", "SELECT 5".
    public let commandTag: String
    /// Rows affected (INSERT/UPDATE/DELETE/MERGE/COPY) or returned (SELECT); 0 when not applicable.
    public let rowsAffected: Int

    public var columnNames: [String] { storage.columnNames }
    public var startIndex: Int { 0 }
    public var endIndex: Int { storage.columnNames.isEmpty ? 0 : storage.values.count / storage.columnNames.count }
    public subscript(position: Int) -> PostgresRow { PostgresRow(storage: storage, index: position) }

    /// All rows as an array.
    public var rows: [PostgresRow] { Array(self) }
}
