import Foundation

/// A Swift type that can be decoded from a result value in text format. Conforming: String,
/// Int, Int64, Int32, Bool, Double, Decimal (numeric), Date (timestamptz/timestamp/date, as an
/// instant in UTC), Data (bytea), Optional (NULL = nil) and one-dimensional arrays of these.
public protocol PostgresDecodable {
    static func decode(from cell: PostgresCell) throws -> Self
}

extension String: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws -> String { try cell.requireText(for: String.self) }
}

extension Int: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws -> Int {
        guard let v = Int(try cell.requireText(for: Int.self)) else { throw cell.decodingError("not an integer") }
        return v
    }
}

extension Int64: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws -> Int64 {
        guard let v = Int64(try cell.requireText(for: Int64.self)) else { throw cell.decodingError("not an integer") }
        return v
    }
}

extension Int32: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws -> Int32 {
        guard let v = Int32(try cell.requireText(for: Int32.self)) else {
            throw cell.decodingError("not a 32-bit integer")
        }
        return v
    }
}

extension Bool: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws -> Bool {
        switch try cell.requireText(for: Bool.self) {
        case "t", "true": return true
        case "f", "false": return false
        default: throw cell.decodingError("not a boolean")
        }
    }
}

extension Double: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws -> Double {
        let text = try cell.requireText(for: Double.self)
        switch text {
        case "NaN": return .nan
        case "Infinity": return .infinity
        case "-Infinity": return -.infinity
        default:
            guard let v = Double(text), v.isFinite else { throw cell.decodingError("not a number") }
            return v
        }
    }
}

extension Decimal: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws -> Decimal {
        let text = try cell.requireText(for: Decimal.self)
        // Decimal(string:) accepts prefixes like "12abc"; check the shape first.
        let valid = !text.isEmpty && text.allSatisfy { $0.isASCII && ($0.isNumber || "+-.eE".contains($0)) }
        guard valid, let v = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")), !v.isNaN else {
            throw cell.decodingError("not a finite decimal number")
        }
        return v
    }
}

extension Date: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws -> Date {
        guard let v = PostgresDateCodec.parse(try cell.requireText(for: Date.self)) else {
            throw cell.decodingError("not an ISO timestamp (expected DateStyle ISO output)")
        }
        return v
    }
}

extension Data: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws -> Data {
        let text = Array(try cell.requireText(for: Data.self).utf8)
        guard text.count >= 2, text[0] == UInt8(ascii: "\\"), text[1] == UInt8(ascii: "x"), text.count % 2 == 0 else {
            throw cell.decodingError("not hex-format bytea")
        }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 48...57: return c - 48
            case 97...102: return c - 87
            case 65...70: return c - 55
            default: return nil
            }
        }
        var out = Data(capacity: (text.count - 2) / 2)
        var i = 2
        while i < text.count {
            guard let hi = nibble(text[i]), let lo = nibble(text[i + 1]) else {
                throw cell.decodingError("not hex-format bytea")
            }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }
}

extension PostgresValue: PostgresDecodable {
    /// Keeps the raw text (`.text`) or `.null`; useful for generic dumps.
    public static func decode(from cell: PostgresCell) throws -> PostgresValue {
        cell.text.map(PostgresValue.text) ?? .null
    }
}

extension Optional: PostgresDecodable where Wrapped: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws -> Wrapped? {
        cell.isNull ? nil : try Wrapped.decode(from: cell)
    }
}

extension Array: PostgresDecodable where Element: PostgresDecodable {
    /// Decodes a one-dimensional array literal such as `{a,"b c",NULL}`.
    public static func decode(from cell: PostgresCell) throws -> [Element] {
        let text = try cell.requireText(for: [Element].self)
        guard let elements = PostgresArrayLiteral.parse(text) else {
            throw cell.decodingError("not a one-dimensional array literal")
        }
        return try elements.map { element in
            try Element.decode(
                from: PostgresCell(
                    text: element,
                    columnName: cell.columnName,
                    columnIndex: cell.columnIndex,
                    rowIndex: cell.rowIndex,
                    typeOID: 0
                )
            )
        }
    }
}
