import Foundation

/// A JSON value decoded with Foundation's `JSONDecoder` (independent of the parser under test),
/// used to read the `*.expect.json` sidecars. Absent keys and explicit `null` stay distinguishable.
enum SidecarJSON: Decodable, Equatable, Sendable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([SidecarJSON])
    case object([String: SidecarJSON])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([SidecarJSON].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: SidecarJSON].self))
        }
    }

    subscript(key: String) -> SidecarJSON? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    var string: String? { if case .string(let value) = self { value } else { nil } }
    var int: Int? { if case .int(let value) = self { value } else { nil } }
    var bool: Bool? { if case .bool(let value) = self { value } else { nil } }
    var array: [SidecarJSON]? { if case .array(let value) = self { value } else { nil } }
    var isNull: Bool { self == .null }
    var keys: [String] { if case .object(let members) = self { members.keys.sorted() } else { [] } }

    /// Parses an RFC 3339 timestamp (with or without fractional seconds) with Foundation.
    static func date(_ text: String) -> Date? {
        let plain = ISO8601DateFormatter()
        if let date = plain.date(from: text) { return date }
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return fractional.date(from: text)
    }
}
