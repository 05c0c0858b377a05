/// Response (or request) header fields in received order, with case-insensitive lookup.
/// A name may appear several times; `headers["retry-after"]` returns the first value and
/// `values(for:)` returns all of them.
public struct HTTPHeaders: Sendable, Sequence, Equatable, CustomStringConvertible {
    /// One header field as received.
    public struct Field: Sendable, Equatable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    public private(set) var fields: [Field]

    public init(_ fields: [(String, String)] = []) {
        self.fields = fields.map { Field(name: $0.0, value: $0.1) }
    }

    public mutating func add(name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// The first value for `name` (case-insensitive), or `nil`.
    public subscript(name: String) -> String? {
        let wanted = name.lowercased()
        return fields.first { $0.name.lowercased() == wanted }?.value
    }

    /// Every value for `name` (case-insensitive), in received order.
    public func values(for name: String) -> [String] {
        let wanted = name.lowercased()
        return fields.filter { $0.name.lowercased() == wanted }.map(\.value)
    }

    public var count: Int { fields.count }

    public func makeIterator() -> IndexingIterator<[Field]> {
        fields.makeIterator()
    }

    public var description: String {
        fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
    }

    mutating func removeAll() {
        fields.removeAll(keepingCapacity: true)
    }

    /// Appends folded continuation text (obsolete line folding) to the last field.
    mutating func appendContinuation(_ text: String) {
        guard !fields.isEmpty else { return }
        fields[fields.count - 1].value += " " + text
    }
}
