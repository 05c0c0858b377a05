import Foundation

/// A Swift value that can be bound as a statement parameter. Conforming: String, Int, Int64,
/// Int32, Bool, Double, Decimal, Date, Data (bytea), PostgresValue, Optional (nil = NULL) and
/// arrays of these (one-dimensional, sent as `text[]`, `bigint[]`, ... literals).
public protocol PostgresEncodable {
    var postgresValue: PostgresValue { get }
    /// The OID of the array type whose elements are this type (0 = let the server infer).
    static var postgresArrayTypeOID: UInt32 { get }
}

extension PostgresEncodable {
    public static var postgresArrayTypeOID: UInt32 { 0 }
}

extension PostgresValue: PostgresEncodable {
    public var postgresValue: PostgresValue { self }
}

extension String: PostgresEncodable {
    public var postgresValue: PostgresValue { .text(self) }
    public static var postgresArrayTypeOID: UInt32 { PostgresTypeOID.textArray }
}

extension Substring: PostgresEncodable {
    public var postgresValue: PostgresValue { .text(String(self)) }
    public static var postgresArrayTypeOID: UInt32 { PostgresTypeOID.textArray }
}

extension Int: PostgresEncodable {
    public var postgresValue: PostgresValue { .int(Int64(self)) }
    public static var postgresArrayTypeOID: UInt32 { PostgresTypeOID.int8Array }
}

extension Int64: PostgresEncodable {
    public var postgresValue: PostgresValue { .int(self) }
    public static var postgresArrayTypeOID: UInt32 { PostgresTypeOID.int8Array }
}

extension Int32: PostgresEncodable {
    public var postgresValue: PostgresValue { .int(Int64(self)) }
    public static var postgresArrayTypeOID: UInt32 { PostgresTypeOID.int8Array }
}

extension Bool: PostgresEncodable {
    public var postgresValue: PostgresValue { .bool(self) }
    public static var postgresArrayTypeOID: UInt32 { PostgresTypeOID.boolArray }
}

extension Double: PostgresEncodable {
    public var postgresValue: PostgresValue { .double(self) }
    public static var postgresArrayTypeOID: UInt32 { PostgresTypeOID.float8Array }
}

extension Decimal: PostgresEncodable {
    public var postgresValue: PostgresValue { .decimal(self) }
    public static var postgresArrayTypeOID: UInt32 { PostgresTypeOID.numericArray }
}

extension Date: PostgresEncodable {
    public var postgresValue: PostgresValue { .date(self) }
    public static var postgresArrayTypeOID: UInt32 { PostgresTypeOID.timestamptzArray }
}

extension Data: PostgresEncodable {
    public var postgresValue: PostgresValue { .bytea(Array(self)) }
    public static var postgresArrayTypeOID: UInt32 { PostgresTypeOID.byteaArray }
}

extension Optional: PostgresEncodable where Wrapped: PostgresEncodable {
    public var postgresValue: PostgresValue { self?.postgresValue ?? .null }
    public static var postgresArrayTypeOID: UInt32 { Wrapped.postgresArrayTypeOID }
}

extension Array: PostgresEncodable where Element: PostgresEncodable {
    public var postgresValue: PostgresValue {
        .array(map { $0.postgresValue }, typeOID: Element.postgresArrayTypeOID)
    }
}
