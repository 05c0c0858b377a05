import Foundation

/// Lenient readers for Apple's loosely typed values ("1", 1, true, "true" all mean the same).
///
/// Each reader returns nil for JSON `null` and for an empty string (treated as absent), and
/// throws a `ReceiptParseError` naming `path` when the value cannot mean what is asked.
extension JSONValue {
    static func excerpt(_ text: String) -> String {
        let limit = 16
        if text.count <= limit { return "\"\(text)\"" }
        return "\"\(text.prefix(limit))…\" (\(text.count) chars)"
    }

    private func invalid(_ path: String, _ expected: String) -> ReceiptParseError {
        let got: String
        switch self {
        case .string(let text): got = "string " + JSONValue.excerpt(text)
        case .number(let text): got = "number " + JSONValue.excerpt(text)
        case .bool(let value): got = "boolean \(value)"
        default: got = typeName
        }
        return ReceiptParseError(code: .invalidField, field: path, detail: "expected \(expected), got \(got)")
    }

    /// A string (numbers are accepted and kept as their literal text, booleans as `true`/`false`).
    func looseString(_ path: @autoclosure () -> String) throws(ReceiptParseError) -> String? {
        switch self {
        case .null: return nil
        case .string(let text): return text.isEmpty ? nil : text
        case .number(let text): return text
        case .bool(let value): return value ? "true" : "false"
        case .array, .object: throw invalid(path(), "a string")
        }
    }

    /// An integer from a number or numeric string (`"21007"`, `21007`, `"1.0"`); booleans map to 1/0.
    func looseInt(_ path: @autoclosure () -> String) throws(ReceiptParseError) -> Int? {
        switch self {
        case .null: return nil
        case .bool(let value): return value ? 1 : 0
        case .number(let text):
            guard let value = JSONValue.integer(from: text) else { throw invalid(path(), "an integer") }
            return value
        case .string(let text):
            // Fast path (Apple's usual "1790000000000"): no trimming, no Foundation bridging.
            if let value = Int(text) { return value }
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty { return nil }
            guard let value = JSONValue.integer(from: trimmed) else { throw invalid(path(), "an integer") }
            return value
        case .array, .object: throw invalid(path(), "an integer")
        }
    }

    static func integer(from text: String) -> Int? {
        if let value = Int(text) { return value }
        // "1.0", "1e3": accept only when the value is integral and in range.
        guard let double = Double(text), double.isFinite, double.rounded() == double,
            abs(double) < 9.0e18
        else { return nil }
        return Int(double)
    }

    /// A flag: true/false, "true"/"false", 1/0, "1"/"0", "yes"/"no" (case-insensitive).
    func looseBool(_ path: @autoclosure () -> String) throws(ReceiptParseError) -> Bool? {
        switch self {
        case .null: return nil
        case .bool(let value): return value
        case .number(let text):
            switch JSONValue.integer(from: text) {
            case 1: return true
            case 0: return false
            default: throw invalid(path(), "a flag (true/false/1/0)")
            }
        case .string(let text):
            switch text {  // fast path for Apple's usual spellings: no trimming or lowercasing
            case "true", "1": return true
            case "false", "0": return false
            default: break
            }
            switch text.trimmingCharacters(in: .whitespaces).lowercased() {
            case "": return nil
            case "true", "1", "yes": return true
            case "false", "0", "no": return false
            default: throw invalid(path(), "a flag (true/false/1/0)")
            }
        case .array, .object: throw invalid(path(), "a flag (true/false/1/0)")
        }
    }

    /// An array (nil when absent/null); anything else is a type error.
    func looseArray(_ path: @autoclosure () -> String) throws(ReceiptParseError) -> [JSONValue]? {
        switch self {
        case .null: return nil
        case .array(let elements): return elements
        default: throw invalid(path(), "an array")
        }
    }

    /// An object's members (nil when null); anything else is a type error.
    func looseObject(_ path: @autoclosure () -> String) throws(ReceiptParseError) -> JSONObject? {
        switch self {
        case .null: return nil
        case .object(let members): return members
        default: throw invalid(path(), "an object")
        }
    }
}

/// Typed access to an object's members with the path used in errors.
struct JSONFields {
    let members: JSONObject
    let path: String

    private func childPath(_ key: String) -> String { path.isEmpty ? key : path + "." + key }

    /// A text member within `ValueBounds` (no NUL, at most `maxLength` UTF-8 bytes).
    func string(_ key: String, maxLength: Int = ValueBounds.maxTextLength) throws(ReceiptParseError) -> String? {
        guard let text = try members[key]?.looseString(childPath(key)) else { return nil }
        return try ValueBounds.text(text, maxLength: maxLength, field: childPath(key))
    }

    func requiredString(_ key: String) throws(ReceiptParseError) -> String {
        guard let value = try string(key) else {
            throw ReceiptParseError(code: .missingField, field: childPath(key), detail: "required field is missing")
        }
        return value
    }

    /// An integer member within `ValueBounds.integerRange`.
    func int(_ key: String) throws(ReceiptParseError) -> Int? {
        guard let value = try members[key]?.looseInt(childPath(key)) else { return nil }
        return try ValueBounds.integer(value, field: childPath(key))
    }
    func bool(_ key: String) throws(ReceiptParseError) -> Bool? { try members[key]?.looseBool(childPath(key)) }
    /// A milliseconds date member within `ValueBounds` (2008-07-01 ..< 2100-01-01).
    func date(_ key: String) throws(ReceiptParseError) -> Date? {
        guard let milliseconds = try members[key]?.looseInt(childPath(key)) else { return nil }
        return try ValueBounds.date(milliseconds: milliseconds, field: childPath(key))
    }

    func objects(_ key: String) throws(ReceiptParseError) -> [JSONFields]? {
        guard let elements = try members[key]?.looseArray(childPath(key)) else { return nil }
        var result: [JSONFields] = []
        result.reserveCapacity(elements.count)
        for (offset, element) in elements.enumerated() {
            guard let object = try element.looseObject("\(childPath(key))[\(offset)]") else { continue }
            result.append(JSONFields(members: object, path: "\(childPath(key))[\(offset)]"))
        }
        return result
    }

    func object(_ key: String) throws(ReceiptParseError) -> JSONFields? {
        guard let object = try members[key]?.looseObject(childPath(key)) else { return nil }
        return JSONFields(members: object, path: childPath(key))
    }
}
