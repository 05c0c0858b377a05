/// An app receipt's attribute SET (docs/simulator.md, "Stored receipts") written straight into bytes: each
/// `SEQUENCE { INTEGER type, INTEGER version 1, OCTET STRING value }` is encoded once into one buffer and the
/// DER `SET OF` is those encodings sorted (X.690 11.6).
///
/// The payload is rebuilt for every `latest_receipt` the simulator answers with, and building it as a tree of
/// `BERNode`s (an array per value, each attribute encoded again to sort it, the whole SET encoded twice
/// when padded) was a sixth of the CPU of a verifyReceipt.
struct ReceiptAttributeSet {
    private var encodings: [UInt8] = []
    private var ranges: [Range<Int>] = []

    init(capacity: Int = 1024) {
        encodings.reserveCapacity(capacity)
    }

    mutating func removeAll() {
        encodings.removeAll(keepingCapacity: true)
        ranges.removeAll(keepingCapacity: true)
    }

    /// An attribute whose value (the OCTET STRING's content) `writeValue` appends.
    mutating func add(_ type: Int64, _ writeValue: (inout [UInt8]) -> Void) {
        let start = encodings.count
        Self.appendTLV(tag: 0x30, to: &encodings) { out in
            Self.appendInteger(type, to: &out)
            Self.appendInteger(1, to: &out)
            Self.appendTLV(tag: 0x04, to: &out, writeValue)
        }
        ranges.append(start..<encodings.count)
    }

    /// An attribute whose value is these bytes as they are (already DER, or opaque).
    mutating func add(_ type: Int64, octets: [UInt8]) {
        add(type) { $0.append(contentsOf: octets) }
    }

    /// An attribute whose value is a DER UTF8String.
    mutating func add(_ type: Int64, utf8 text: String) {
        add(type) { out in Self.appendTLV(tag: 0x0C, to: &out) { $0.append(contentsOf: text.utf8) } }
    }

    /// An attribute whose value is a DER UTF8String of a number's decimal digits.
    mutating func add(_ type: Int64, decimalText value: UInt64) {
        add(type) { out in Self.appendTLV(tag: 0x0C, to: &out) { ASCIIDecimal.append(value, to: &$0) } }
    }

    /// An attribute whose value is a DER INTEGER.
    mutating func add(_ type: Int64, integer value: Int64) {
        add(type) { Self.appendInteger(value, to: &$0) }
    }

    /// An attribute whose value is Apple's receipt date, an IA5String in RFC 3339 (UTC, whole seconds); nil
    /// gives the empty string Apple writes when there is no date.
    mutating func add(_ type: Int64, date ms: Int64?) {
        add(type) { out in
            Self.appendTLV(tag: 0x16, to: &out) { text in
                if let ms { SimTime.appendRFC3339(SimTime.floorDiv(ms, 1000) * 1000, to: &text) }
            }
        }
    }

    /// The length of `write(into:)`'s output.
    var encodedCount: Int { BERNode.headerLength(contentLength: encodings.count) + encodings.count }

    /// Appends the DER SET OF the attributes added so far.
    func write(into out: inout [UInt8]) {
        let sorted = encodings.withUnsafeBufferPointer { all in
            ranges.sorted { a, b in
                UnsafeBufferPointer(rebasing: all[a]).lexicographicallyPrecedes(UnsafeBufferPointer(rebasing: all[b]))
            }
        }
        out.reserveCapacity(out.count + encodedCount)
        out.append(0x31)
        BERNode.appendLength(encodings.count, to: &out)
        for range in sorted { out.append(contentsOf: encodings[range]) }
    }

    var encoded: [UInt8] {
        var out: [UInt8] = []
        write(into: &out)
        return out
    }

    /// Appends `tag`, the definite length and the content `write` appends. The length is patched in once the
    /// content is written (moving the content when it needs more than one length octet).
    static func appendTLV(tag: UInt8, to out: inout [UInt8], _ write: (inout [UInt8]) -> Void) {
        out.append(tag)
        let lengthAt = out.count
        out.append(0)
        write(&out)
        let length = out.count - lengthAt - 1
        if length < 0x80 {
            out[lengthAt] = UInt8(length)
            return
        }
        let extra = BERNode.headerLength(contentLength: length) - 2
        out.insert(contentsOf: repeatElement(0, count: extra), at: lengthAt + 1)
        out[lengthAt] = 0x80 | UInt8(extra)
        for k in 0..<extra { out[lengthAt + 1 + k] = UInt8(truncatingIfNeeded: length >> (8 * (extra - 1 - k))) }
    }

    /// A DER INTEGER: the fewest two's complement octets (as `BERNode.integer`).
    static func appendInteger(_ value: Int64, to out: inout [UInt8]) {
        var count = 1
        while count < 8 {
            let top = value >> Int64(count * 8 - 1)
            if top == 0 || top == -1 { break }
            count += 1
        }
        out.append(0x02)
        out.append(UInt8(count))
        for k in stride(from: count - 1, through: 0, by: -1) { out.append(UInt8(truncatingIfNeeded: value >> (8 * k))) }
    }
}
