/// A parsed JSON value that keeps numbers as their source text.
///
/// Apple's verifyReceipt sends numbers as strings (and sometimes strings as numbers), so the
/// parser keeps the literal text of every number and lets the typed layer coerce it. Keeping
/// the text also means 13-digit millisecond timestamps never pass through a `Double`.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    /// The number's literal text exactly as it appeared in the body (e.g. `1700000000000`, `1.5e3`).
    case number(String)
    case string(String)
    case array([JSONValue])
    /// Objects keep the last value of a duplicated key.
    case object(JSONObject)

    /// A short name of the value's JSON type, for error messages.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// The member `key` of an object, or nil for absent keys and non-objects.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }
}
