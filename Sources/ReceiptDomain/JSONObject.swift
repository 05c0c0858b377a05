/// A JSON object's members in the order they appeared.
///
/// verifyReceipt answers hold a few hundred small objects (one per transaction, about 25 members each)
/// and the typed layer reads some of each object's members once. Keeping the members as a plain list and
/// looking a key up by scanning it costs less than hashing every key into a dictionary: profiling the
/// nightly run showed the dictionaries (hashing, inserting, growing) as about a tenth of the reconciler's
/// CPU (docs/architecture.md, "Database work per subscription" has the figures). A duplicated key keeps
/// its last value, as a dictionary built in order would: lookups scan from the end.
public struct JSONObject: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    private var members: [Member]

    struct Member: Sendable {
        var key: String
        var value: JSONValue
    }

    public init() { members = [] }

    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        members = []
        for (key, value) in elements { self[key] = value }
    }

    public init(_ dictionary: [String: JSONValue]) {
        members = dictionary.map { Member(key: $0.key, value: $0.value) }
    }

    /// The parser's way in: appends without looking for an earlier member of the same name.
    mutating func appendParsed(key: String, value: JSONValue) {
        members.append(Member(key: key, value: value))
    }

    mutating func reserveCapacity(_ count: Int) { members.reserveCapacity(count) }

    /// The value of `key` (the last one when the key is repeated); setting replaces that value, or adds a
    /// member; setting nil removes every member of that name.
    public subscript(key: String) -> JSONValue? {
        get {
            var index = members.endIndex
            while index > members.startIndex {
                index -= 1
                if members[index].key == key { return members[index].value }
            }
            return nil
        }
        set {
            guard let newValue else {
                members.removeAll { $0.key == key }
                return
            }
            if let index = members.lastIndex(where: { $0.key == key }) {
                members[index].value = newValue
            } else {
                members.append(Member(key: key, value: newValue))
            }
        }
    }

    /// Each distinct key once, in the order of first appearance.
    public var keys: [String] {
        var seen = Set<String>()
        return members.compactMap { seen.insert($0.key).inserted ? $0.key : nil }
    }

    /// The number of distinct keys.
    public var count: Int { keys.count }
    public var isEmpty: Bool { members.isEmpty }

    /// The members as a dictionary (last value of a repeated key).
    public var dictionary: [String: JSONValue] {
        var result: [String: JSONValue] = [:]
        result.reserveCapacity(members.count)
        for member in members { result[member.key] = member.value }
        return result
    }

    /// Equal when they hold the same keys with equal values, in any order (a dictionary's equality).
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool { lhs.dictionary == rhs.dictionary }
}
