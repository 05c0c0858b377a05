import CivilTime
import Foundation
import ReceiptDomain

/// JSON output with members in a chosen order (the new `explain` forms), pretty (two-space indent) or on
/// one line. Dates are written as RFC 3339 UTC.
public indirect enum ExplainJSON: Sendable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case string(String)
    case array([ExplainJSON])
    case object([(String, ExplainJSON)])

    public static func == (lhs: ExplainJSON, rhs: ExplainJSON) -> Bool {
        lhs.text(pretty: false) == rhs.text(pretty: false)
    }

    public static func date(_ date: Date?) -> ExplainJSON { date.map { .string(RFC3339.string($0)) } ?? .null }
    public static func string(_ text: String?) -> ExplainJSON { text.map { .string($0) } ?? .null }

    /// An existing `JSONValue` (numbers keep their text when they are integers; objects sorted by key).
    public static func from(_ value: JSONValue) -> ExplainJSON {
        switch value {
        case .null: return .null
        case .bool(let flag): return .bool(flag)
        case .number(let text): return Int64(text).map { .integer($0) } ?? .string(text)
        case .string(let text): return .string(text)
        case .array(let items): return .array(items.map(from))
        case .object(let members): return .object(members.keys.sorted().map { ($0, from(members[$0] ?? .null)) })
        }
    }

    /// A decoded payload value, by reflection: stored properties in declaration order, absent optionals
    /// left out, `Date` as RFC 3339.
    public static func reflecting(_ value: Any) -> ExplainJSON {
        switch value {
        case let date as Date: return .date(date)
        case let text as String: return .string(text)
        case let flag as Bool: return .bool(flag)
        case let number as Int: return .integer(Int64(number))
        case let number as Int64: return .integer(number)
        default: break
        }
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .optional:
            return mirror.children.first.map { reflecting($0.value) } ?? .null
        case .collection, .set:
            return .array(mirror.children.map { reflecting($0.value) })
        case .struct, .class:
            var members: [(String, ExplainJSON)] = []
            for child in mirror.children {
                guard let label = child.label else { continue }
                let rendered = reflecting(child.value)
                if rendered != .null { members.append((label, rendered)) }
            }
            return .object(members)
        case .enum:
            return .string("\(value)")
        default:
            return .string("\(value)")
        }
    }

    /// Replaces (or appends) the member `key` of an object.
    public func setting(_ key: String, _ newValue: ExplainJSON) -> ExplainJSON {
        guard case .object(var members) = self else { return self }
        if let index = members.firstIndex(where: { $0.0 == key }) {
            members[index].1 = newValue
        } else {
            members.append((key, newValue))
        }
        return .object(members)
    }

    /// The text: pretty ends with a newline, compact does not.
    public func text(pretty: Bool) -> String {
        var output = ""
        write(to: &output, pretty: pretty, indent: 0)
        return pretty ? output + "\n" : output
    }

    private func write(to output: inout String, pretty: Bool, indent: Int) {
        switch self {
        case .null: output += "null"
        case .bool(let flag): output += flag ? "true" : "false"
        case .integer(let number): output += String(number)
        case .string(let text): JSONValue.writeString(text, to: &output)
        case .array(let items):
            if items.isEmpty {
                output += "[]"
                return
            }
            output += "["
            for (offset, item) in items.enumerated() {
                if offset > 0 { output += "," }
                if pretty { output += "\n" + String(repeating: "  ", count: indent + 1) }
                item.write(to: &output, pretty: pretty, indent: indent + 1)
            }
            if pretty { output += "\n" + String(repeating: "  ", count: indent) }
            output += "]"
        case .object(let members):
            if members.isEmpty {
                output += "{}"
                return
            }
            output += "{"
            for (offset, member) in members.enumerated() {
                if offset > 0 { output += "," }
                if pretty { output += "\n" + String(repeating: "  ", count: indent + 1) }
                JSONValue.writeString(member.0, to: &output)
                output += pretty ? ": " : ":"
                member.1.write(to: &output, pretty: pretty, indent: indent + 1)
            }
            if pretty { output += "\n" + String(repeating: "  ", count: indent) }
            output += "}"
        }
    }
}
