import Foundation

/// Any JSON document, for payloads of a kind `explain` does not know (printed as they are) and for
/// telling payload kinds apart by their members.
struct GenericJSON: Decodable {
    let value: ExplainJSON
    let keys: Set<String>

    init(from decoder: any Decoder) throws {
        if let object = try? decoder.container(keyedBy: DynamicKey.self) {
            var members: [(String, ExplainJSON)] = []
            for key in object.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) {
                members.append((key.stringValue, try object.decode(GenericJSON.self, forKey: key).value))
            }
            value = .object(members)
            keys = Set(members.map(\.0))
            return
        }
        keys = []
        if var array = try? decoder.unkeyedContainer() {
            var items: [ExplainJSON] = []
            while !array.isAtEnd { items.append(try array.decode(GenericJSON.self).value) }
            value = .array(items)
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            value = .null
        } else if let flag = try? single.decode(Bool.self) {
            value = .bool(flag)
        } else if let number = try? single.decode(Int64.self) {
            value = .integer(number)
        } else if let number = try? single.decode(Double.self) {
            value = .string(String(number))
        } else {
            value = .string(try single.decode(String.self))
        }
    }

    static func parse(_ bytes: [UInt8]) -> GenericJSON? {
        try? JSONDecoder().decode(GenericJSON.self, from: Data(bytes))
    }

    private struct DynamicKey: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
