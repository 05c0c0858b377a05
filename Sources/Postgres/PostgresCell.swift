/// One value of a result row in the server's text format, with enough context (row, column,
/// type) to produce a precise decoding error.
public struct PostgresCell: Sendable {
    /// The text-format value, or nil for SQL NULL.
    public let text: String?
    public let columnName: String
    public let columnIndex: Int
    public let rowIndex: Int
    /// The column's type OID (see `PostgresTypeOID`).
    public let typeOID: UInt32

    public var isNull: Bool { text == nil }

    /// Decodes the value; a NULL into a non-optional type throws.
    public func decode<T: PostgresDecodable>(_ type: T.Type = T.self) throws -> T {
        try T.decode(from: self)
    }

    /// The non-NULL text, or a decoding error naming the row and column.
    public func requireText(for type: Any.Type) throws -> String {
        guard let text else {
            throw decodingError("is NULL but \(type) is not optional (decode as \(type)? instead)")
        }
        return text
    }

    /// A decoding error naming row, column and a truncated copy of the offending value.
    public func decodingError(_ problem: String) -> PostgresError {
        let shown = text.map { value in
            value.count > 16 ? "\"\(value.prefix(16))…\" (\(value.count) chars)" : "\"\(value)\""
        }
        return PostgresError(
            code: .decoding,
            message: "row \(rowIndex), column \"\(columnName)\" (#\(columnIndex), type OID \(typeOID))"
                + (shown.map { " value \($0)" } ?? "") + ": " + problem
        )
    }
}
