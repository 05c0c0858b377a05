import Foundation

/// A statement parameter, sent to the server in text format with a type OID so the server
/// does not have to guess (`NULL` and `.text` are sent as "unknown" and take the column's type).
public enum PostgresValue: Sendable, Hashable {
    case null
    case text(String)
    case int(Int64)
    case bool(Bool)
    case double(Double)
    case decimal(Decimal)
    /// timestamptz, sent as UTC with microseconds (`2024-05-01 12:00:00.123456+00`).
    case date(Date)
    case bytea([UInt8])
    /// A one-dimensional array; `typeOID` is the array type (e.g. 1009 text[], 1016 bigint[]),
    /// or 0 to let the server infer it (then cast in SQL: `$1::text[]`).
    case array([PostgresValue], typeOID: UInt32)

    /// A `text[]` parameter: `WHERE id = ANY($1)`, `unnest($1::text[])`.
    public static func textArray(_ values: [String?]) -> PostgresValue {
        .array(values.map { $0.map(PostgresValue.text) ?? .null }, typeOID: PostgresTypeOID.textArray)
    }

    /// A `bigint[]` parameter.
    public static func int64Array(_ values: [Int64?]) -> PostgresValue {
        .array(values.map { $0.map(PostgresValue.int) ?? .null }, typeOID: PostgresTypeOID.int8Array)
    }

    /// The type OID sent with the parameter (0 = let the server infer).
    var typeOID: UInt32 {
        switch self {
        case .null, .text: return 0
        case .int: return PostgresTypeOID.int8
        case .bool: return PostgresTypeOID.bool
        case .double: return PostgresTypeOID.float8
        case .decimal: return PostgresTypeOID.numeric
        case .date: return PostgresTypeOID.timestamptz
        case .bytea: return PostgresTypeOID.bytea
        case .array(_, let oid): return oid
        }
    }

    /// Whether `text` holds a NUL character: `memchr` over its contiguous UTF-8 (parameters can be receipts of
    /// several kilobytes, and a byte-by-byte search was a measurable share of a run's CPU).
    static func containsNUL(_ text: String) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { bytes in
            guard let base = bytes.baseAddress else { return false }
            return memchr(base, 0, bytes.count) != nil
        } ?? text.utf8.contains(0)
    }

    /// PostgreSQL's text cannot hold a NUL character: such a parameter is an encoding error naming its size.
    static func refuseNUL(_ text: String) throws {
        guard containsNUL(text) else { return }
        throw PostgresError(
            code: .encoding,
            message:
                "text parameter contains a NUL character (\(text.utf8.count) bytes), which PostgreSQL text cannot store"
        )
    }

    /// The text-format representation, or nil for SQL NULL.
    func textRepresentation() throws -> String? {
        switch self {
        case .null: return nil
        case .text(let s):
            try Self.refuseNUL(s)
            return s
        case .int(let v): return String(v)
        case .bool(let v): return v ? "t" : "f"
        case .double(let v):
            if v.isNaN { return "NaN" }
            if v.isInfinite { return v < 0 ? "-Infinity" : "Infinity" }
            return "\(v)"
        case .decimal(let v):
            guard !v.isNaN else { throw PostgresError(code: .encoding, message: "Decimal parameter is NaN") }
            return v.description
        case .date(let d):
            guard let text = PostgresDateCodec.format(d) else {
                throw PostgresError(
                    code: .encoding,
                    message: "Date parameter \(d.timeIntervalSince1970) is outside PostgreSQL's timestamp range"
                )
            }
            return text
        case .bytea(let bytes):
            let hex: [UInt8] = Array("0123456789abcdef".utf8)
            var out: [UInt8] = [UInt8(ascii: "\\"), UInt8(ascii: "x")]
            out.reserveCapacity(2 + bytes.count * 2)
            for b in bytes {
                out.append(hex[Int(b >> 4)])
                out.append(hex[Int(b & 0x0f)])
            }
            return String(decoding: out, as: UTF8.self)
        case .array:
            var out: [UInt8] = []
            _ = try appendTextRepresentation(to: &out)
            return String(decoding: out, as: UTF8.self)
        }
    }

    /// Appends the text-format representation to `out` (no terminator); false, and nothing appended, for SQL
    /// NULL. Statement parameters are written this way straight into the buffer handed to libpq: a batch's
    /// arrays hold hundreds of multi-kilobyte receipts, and building a String for each array first cost a
    /// copy and a UTF-8 validation per receipt (docs/architecture.md, "Database work per subscription").
    func appendTextRepresentation(to out: inout [UInt8]) throws -> Bool {
        switch self {
        case .null:
            return false
        case .text(let s):
            try Self.appendChecked(s, to: &out, quoted: false)
            return true
        case .array(let elements, _):
            out.append(UInt8(ascii: "{"))
            for (index, element) in elements.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                switch element {
                case .null:
                    out.append(contentsOf: [0x4E, 0x55, 0x4C, 0x4C])  // NULL
                case .text(let s):
                    try Self.appendChecked(s, to: &out, quoted: true)
                default:
                    guard let text = try element.textRepresentation() else {
                        out.append(contentsOf: [0x4E, 0x55, 0x4C, 0x4C])
                        continue
                    }
                    try Self.appendChecked(text, to: &out, quoted: true)
                }
            }
            out.append(UInt8(ascii: "}"))
            return true
        default:
            guard let text = try textRepresentation() else { return false }
            out.append(contentsOf: text.utf8)
            return true
        }
    }

    /// Appends `text` (refused when it holds a NUL), as an array element in double quotes with `"` and `\`
    /// escaped when `quoted`. The searches are `memchr` over the contiguous UTF-8.
    private static func appendChecked(_ text: String, to out: inout [UInt8], quoted: Bool) throws {
        try refuseNUL(text)
        var text = text
        text.withUTF8 { bytes in
            let count = bytes.count
            guard quoted else {
                out.append(contentsOf: bytes)
                return
            }
            out.append(UInt8(ascii: "\""))
            let plain =
                bytes.baseAddress.map {
                    memchr($0, Int32(UInt8(ascii: "\"")), count) == nil
                        && memchr($0, Int32(UInt8(ascii: "\\")), count) == nil
                } ?? true
            if plain {
                out.append(contentsOf: bytes)
            } else {
                for byte in bytes {
                    if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { out.append(UInt8(ascii: "\\")) }
                    out.append(byte)
                }
            }
            out.append(UInt8(ascii: "\""))
        }
    }
}

extension PostgresValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByFloatLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .text(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(nilLiteral: ()) { self = .null }
}

/// Type OIDs of the built-in types this module encodes or checks.
public enum PostgresTypeOID {
    public static let bool: UInt32 = 16
    public static let bytea: UInt32 = 17
    public static let int8: UInt32 = 20
    public static let int2: UInt32 = 21
    public static let int4: UInt32 = 23
    public static let text: UInt32 = 25
    public static let float4: UInt32 = 700
    public static let float8: UInt32 = 701
    public static let boolArray: UInt32 = 1000
    public static let textArray: UInt32 = 1009
    public static let int8Array: UInt32 = 1016
    public static let float8Array: UInt32 = 1022
    public static let date: UInt32 = 1082
    public static let timestamp: UInt32 = 1114
    public static let timestamptz: UInt32 = 1184
    public static let timestamptzArray: UInt32 = 1185
    public static let numeric: UInt32 = 1700
    public static let numericArray: UInt32 = 1231
    public static let byteaArray: UInt32 = 1001
}
