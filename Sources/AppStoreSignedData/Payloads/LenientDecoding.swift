import Foundation

/// Field readers for App Store JSON: numbers of any JSON form (`1700000000000`, `1.7e12`, `"42"`),
/// dates as milliseconds since the epoch, absent and `null` alike. A value of the wrong kind is an error
/// naming the field (the payload is then `malformed`), never a silent nil.
extension KeyedDecodingContainer {
    func lenientInt64(_ key: Key) throws -> Int64? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        if let value = try? decode(Int64.self, forKey: key) { return value }
        if let value = try? decode(Double.self, forKey: key), value.isFinite, let exact = Int64(exactly: value) {
            return exact
        }
        if let text = try? decode(String.self, forKey: key), let value = Int64(text) { return value }
        throw DecodingError.typeMismatch(
            Int64.self,
            .init(codingPath: codingPath + [key], debugDescription: "\(key.stringValue) is not an integer")
        )
    }

    func lenientInt(_ key: Key) throws -> Int? {
        guard let wide = try lenientInt64(key) else { return nil }
        guard let value = Int(exactly: wide) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: codingPath + [key], debugDescription: "\(key.stringValue) is out of range")
            )
        }
        return value
    }

    /// Milliseconds since 1970-01-01T00:00:00Z, at most year 9999 either way (no date arithmetic traps).
    func millisecondsDate(_ key: Key) throws -> Date? {
        guard let milliseconds = try lenientInt64(key) else { return nil }
        guard milliseconds.magnitude <= 253_402_300_799_999 else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: codingPath + [key], debugDescription: "\(key.stringValue) is not a plausible date")
            )
        }
        return Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    /// A string; a JSON number is accepted as its decimal text (ids sometimes arrive as numbers).
    func lenientString(_ key: Key) throws -> String? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        if let text = try? decode(String.self, forKey: key) { return text }
        if let number = try? decode(Int64.self, forKey: key) { return String(number) }
        throw DecodingError.typeMismatch(
            String.self,
            .init(codingPath: codingPath + [key], debugDescription: "\(key.stringValue) is not a string")
        )
    }

    /// A boolean; `0`/`1` and `"true"`/`"false"` are accepted.
    func lenientBool(_ key: Key) throws -> Bool? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        if let flag = try? decode(Bool.self, forKey: key) { return flag }
        if let number = try? decode(Int64.self, forKey: key), number == 0 || number == 1 { return number == 1 }
        if let text = try? decode(String.self, forKey: key) {
            switch text.lowercased() {
            case "true", "1": return true
            case "false", "0": return false
            default: break
            }
        }
        throw DecodingError.typeMismatch(
            Bool.self,
            .init(codingPath: codingPath + [key], debugDescription: "\(key.stringValue) is not a boolean")
        )
    }

    func optional<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        return try decode(type, forKey: key)
    }
}

/// Coding keys named by their JSON text: every payload type decodes through these, so unknown fields are
/// simply never asked for.
struct AnyKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
    init(_ name: String) { stringValue = name }
}

extension KeyedDecodingContainer where Key == AnyKey {
    func int64(_ name: String) throws -> Int64? { try lenientInt64(AnyKey(name)) }
    func int(_ name: String) throws -> Int? { try lenientInt(AnyKey(name)) }
    func date(_ name: String) throws -> Date? { try millisecondsDate(AnyKey(name)) }
    func string(_ name: String) throws -> String? { try lenientString(AnyKey(name)) }
    func bool(_ name: String) throws -> Bool? { try lenientBool(AnyKey(name)) }
    func value<T: Decodable>(_ type: T.Type, _ name: String) throws -> T? { try optional(type, AnyKey(name)) }
}

/// Decodes App Store JSON into a payload type; errors become `malformed` naming the field.
enum PayloadDecoder {
    static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws(SignedDataError) -> T {
        do {
            return try JSONDecoder().decode(type, from: Data(bytes))
        } catch let error as DecodingError {
            throw SignedDataError(.malformed, describe(error))
        } catch {
            throw SignedDataError(.malformed, "the payload is not JSON")
        }
    }

    static func describe(_ error: DecodingError) -> String {
        let context: DecodingError.Context
        switch error {
        case .typeMismatch(_, let c), .valueNotFound(_, let c), .keyNotFound(_, let c), .dataCorrupted(let c):
            context = c
        @unknown default:
            return "the payload does not decode"
        }
        let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        if path.isEmpty { return "the payload is not a JSON object" }
        return "field \(path): \(context.debugDescription)"
    }
}
