/// The simulator's own minimal BER reader (it never uses the reconciler's): tag-length-value elements with
/// definite or indefinite lengths (docs/simulator.md, "Stored receipts"). Every read is bounds-checked;
/// anything out of shape is nil, never a trap.
struct BERReader {
    /// One element: its first identifier byte, where its content starts and ends, and where the next
    /// element starts. For an indefinite length, `contentEnd` is the start of the end-of-contents octets.
    struct Element {
        var tag: UInt8
        var contentStart: Int
        var contentEnd: Int
        var end: Int
        var isConstructed: Bool { tag & 0x20 != 0 }
    }

    let bytes: [UInt8]
    static let maxDepth = 32

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The element starting at `offset`, which must end by `limit`.
    func element(at offset: Int, limit: Int, depth: Int = 0) -> Element? {
        guard depth < Self.maxDepth, offset < limit, limit <= bytes.count else { return nil }
        let tag = bytes[offset]
        var i = offset + 1
        if tag & 0x1F == 0x1F {
            // High tag number: continuation bytes have the top bit set.
            while i < limit && bytes[i] & 0x80 != 0 { i += 1 }
            i += 1
        }
        guard i < limit else { return nil }
        let first = bytes[i]
        i += 1
        if first == 0x80 {
            // Indefinite: constructed only; members until the end-of-contents octets.
            guard tag & 0x20 != 0 else { return nil }
            var j = i
            while true {
                guard j + 1 < limit else { return nil }
                if bytes[j] == 0 && bytes[j + 1] == 0 {
                    return Element(tag: tag, contentStart: i, contentEnd: j, end: j + 2)
                }
                guard let member = element(at: j, limit: limit, depth: depth + 1) else { return nil }
                j = member.end
            }
        }
        var length = 0
        if first < 0x80 {
            length = Int(first)
        } else {
            let count = Int(first & 0x7F)
            guard count <= 4, i + count <= limit else { return nil }
            for k in 0..<count { length = length << 8 | Int(bytes[i + k]) }
            i += count
        }
        guard length <= limit - i else { return nil }
        return Element(tag: tag, contentStart: i, contentEnd: i + length, end: i + length)
    }

    /// The members of a constructed element, in order.
    func members(_ parent: Element, depth: Int = 0) -> [Element]? {
        guard parent.isConstructed else { return nil }
        var found: [Element] = []
        var j = parent.contentStart
        while j < parent.contentEnd {
            guard let member = element(at: j, limit: parent.contentEnd, depth: depth + 1) else { return nil }
            found.append(member)
            j = member.end
        }
        return found
    }

    /// The member at `index` of a constructed element, if it has `tag`.
    func member(_ parent: Element, _ index: Int, tag: UInt8) -> Element? {
        guard let all = members(parent), index < all.count, all[index].tag == tag else { return nil }
        return all[index]
    }

    /// An OCTET STRING's bytes, primitive or constructed from segments.
    func octets(_ element: Element, depth: Int = 0) -> [UInt8]? {
        if element.tag == 0x04 { return Array(bytes[element.contentStart..<element.contentEnd]) }
        guard element.tag == 0x24, depth < 8, let segments = members(element) else { return nil }
        var joined: [UInt8] = []
        for segment in segments {
            guard let part = octets(segment, depth: depth + 1) else { return nil }
            joined += part
        }
        return joined
    }

    /// A non-negative INTEGER that fits 63 bits.
    func integer(_ element: Element) -> Int64? {
        let count = element.contentEnd - element.contentStart
        guard element.tag == 0x02, count >= 1, count <= 8, bytes[element.contentStart] & 0x80 == 0 else { return nil }
        var value: Int64 = 0
        for k in element.contentStart..<element.contentEnd { value = value << 8 | Int64(bytes[k]) }
        return value
    }

    func content(_ element: Element) -> ArraySlice<UInt8> { bytes[element.contentStart..<element.contentEnd] }
}
