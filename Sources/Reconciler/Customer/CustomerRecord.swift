import CivilTime
import Foundation
import Postgres

/// One database row as stored, its columns in the query's order (docs/customer.md): booleans and integers as
/// JSON's, timestamps as RFC 3339 UTC, everything else as text. Queries leave out receipts and signed payloads:
/// those are never printed whole.
public struct CustomerRecord: Sendable, Equatable {
    public var columns: [(name: String, value: ExplainJSON)]

    public static func == (lhs: CustomerRecord, rhs: CustomerRecord) -> Bool { lhs.json == rhs.json }

    public init(columns: [(name: String, value: ExplainJSON)]) {
        self.columns = columns
    }

    init(_ row: PostgresRow) throws {
        var columns: [(String, ExplainJSON)] = []
        for (index, name) in row.columnNames.enumerated() {
            columns.append((name, try Self.value(try row.cell(index))))
        }
        self.columns = columns
    }

    public var json: ExplainJSON { .object(columns.map { ($0.name, $0.value) }) }

    /// The value of column `name` (`.null` when absent).
    public subscript(name: String) -> ExplainJSON {
        columns.first { $0.name == name }?.value ?? .null
    }

    /// The column's value as text for a terminal: `-` for NULL.
    public func text(_ name: String) -> String {
        switch self[name] {
        case .null: return "-"
        case .bool(let flag): return flag ? "yes" : "no"
        case .integer(let number): return String(number)
        case .string(let text): return text
        case .array, .object: return self[name].text(pretty: false)
        }
    }

    static func value(_ cell: PostgresCell) throws -> ExplainJSON {
        guard let text = cell.text else { return .null }
        switch cell.typeOID {
        case PostgresTypeOID.bool: return .bool(text == "t")
        case PostgresTypeOID.int2, PostgresTypeOID.int4, PostgresTypeOID.int8:
            return Int64(text).map(ExplainJSON.integer) ?? .string(text)
        case PostgresTypeOID.timestamptz: return .date(try cell.decode(Date.self))
        default: return .string(text)
        }
    }
}
