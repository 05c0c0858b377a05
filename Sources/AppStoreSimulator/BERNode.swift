/// A value to write in ASN.1 BER (docs/simulator.md, "Stored receipts"): a primitive with its content bytes,
/// a constructed value with its members, or bytes already encoded (a certificate).
///
/// `der` writes definite lengths throughout; `indefinite` writes every constructed value with the
/// indefinite length form (`0x80`, closed by the end-of-contents octets `00 00`), as Xcode and StoreKit do
/// for the outer layers of an app receipt. Pre-encoded bytes are copied as they are in both forms.
indirect enum BERNode: Sendable {
    case primitive(tag: UInt8, [UInt8])
    case constructed(tag: UInt8, [BERNode])
    case encoded([UInt8])

    static func integer(_ value: Int64) -> BERNode {
        var bytes: [UInt8] = []
        var v = value
        repeat {
            bytes.insert(UInt8(truncatingIfNeeded: v), at: 0)
            v >>= 8
        } while !(v == 0 && bytes[0] & 0x80 == 0) && !(v == -1 && bytes[0] & 0x80 != 0)
        return .primitive(tag: 0x02, bytes)
    }

    static func octets(_ bytes: [UInt8]) -> BERNode { .primitive(tag: 0x04, bytes) }
    static func utf8(_ text: String) -> BERNode { .primitive(tag: 0x0C, Array(text.utf8)) }
    static func ia5(_ text: String) -> BERNode { .primitive(tag: 0x16, Array(text.utf8)) }
    static func sequence(_ members: [BERNode]) -> BERNode { .constructed(tag: 0x30, members) }
    static func set(_ members: [BERNode]) -> BERNode { .constructed(tag: 0x31, members) }
    /// `[n]` context-specific, constructed.
    static func context(_ number: UInt8, _ members: [BERNode]) -> BERNode { .constructed(tag: 0xA0 | number, members) }

    /// An OBJECT IDENTIFIER from its arcs (the first two are at most 2 and 39).
    static func oid(_ arcs: [UInt64]) -> BERNode {
        var bytes: [UInt8] = []
        func base128(_ value: UInt64) {
            var chunk: [UInt8] = [UInt8(value & 0x7F)]
            var v = value >> 7
            while v > 0 {
                chunk.insert(UInt8(v & 0x7F) | 0x80, at: 0)
                v >>= 7
            }
            bytes += chunk
        }
        base128(arcs[0] * 40 + arcs[1])
        for arc in arcs.dropFirst(2) { base128(arc) }
        return .primitive(tag: 0x06, bytes)
    }

    var der: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(derCount)
        write(into: &out, indefinite: false)
        return out
    }

    /// The length of `der`. Definite lengths are computed before the content is written, so each value is
    /// written once into the output (a receipt's payload used to be copied once per enclosing layer).
    var derCount: Int {
        switch self {
        case .encoded(let bytes): return bytes.count
        case .primitive(_, let content): return Self.headerLength(contentLength: content.count) + content.count
        case .constructed(_, let members):
            let content = Self.contentCount(members)
            return Self.headerLength(contentLength: content) + content
        }
    }

    private static func contentCount(_ members: [BERNode]) -> Int {
        members.reduce(0) { $0 + $1.derCount }
    }

    /// Tag and length octets of a definite-length value (one-byte tag) with `contentLength` content bytes.
    static func headerLength(contentLength: Int) -> Int {
        guard contentLength >= 0x80 else { return 2 }
        var count = 0
        var v = contentLength
        while v > 0 {
            count += 1
            v >>= 8
        }
        return 2 + count
    }

    var indefinite: [UInt8] {
        var out: [UInt8] = []
        write(into: &out, indefinite: true)
        return out
    }

    func write(into out: inout [UInt8], indefinite: Bool) {
        switch self {
        case .encoded(let bytes):
            out += bytes
        case .primitive(let tag, let content):
            out.append(tag)
            Self.appendLength(content.count, to: &out)
            out += content
        case .constructed(let tag, let members):
            out.append(tag)
            if indefinite {
                out.append(0x80)
                for member in members { member.write(into: &out, indefinite: true) }
                out += [0, 0]
            } else {
                Self.appendLength(Self.contentCount(members), to: &out)
                for member in members { member.write(into: &out, indefinite: false) }
            }
        }
    }

    static func appendLength(_ length: Int, to out: inout [UInt8]) {
        if length < 0x80 {
            out.append(UInt8(length))
            return
        }
        // Big-endian, fewest octets, without a temporary array (receipt payloads write a few dozen).
        let count = headerLength(contentLength: length) - 2
        out.append(0x80 | UInt8(count))
        for k in stride(from: count - 1, through: 0, by: -1) {
            out.append(UInt8(truncatingIfNeeded: length >> (8 * k)))
        }
    }
}
