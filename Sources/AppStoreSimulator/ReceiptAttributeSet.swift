#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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

    /// An attribute whose value (the OCTET STRING's content) is the `valueLength` bytes `writeValue` appends.
    /// Every length is known before anything is written, so the header octets are written once, in place.
    @inline(__always)
    mutating func add(_ type: Int64, valueLength: Int, _ writeValue: (inout [UInt8]) -> Void) {
        let start = encodings.count
        let octetString = BERNode.headerLength(contentLength: valueLength) + valueLength
        // INTEGER type, INTEGER 1 (3 bytes), OCTET STRING value.
        let content = 2 + Self.integerLength(type) + 3 + octetString
        encodings.append(0x30)
        BERNode.appendLength(content, to: &encodings)
        Self.appendInteger(type, to: &encodings)
        Self.appendInteger(1, to: &encodings)
        encodings.append(0x04)
        BERNode.appendLength(valueLength, to: &encodings)
        writeValue(&encodings)
        assert(encodings.count - start == BERNode.headerLength(contentLength: content) + content)
        ranges.append(start..<encodings.count)
    }

    /// An attribute whose value is these bytes as they are (already DER, or opaque).
    mutating func add(_ type: Int64, octets: [UInt8]) {
        add(type, valueLength: octets.count) { $0.append(contentsOf: octets) }
    }

    /// An attribute whose value is the DER SET OF another set's attributes (an in-app purchase record).
    mutating func add(_ type: Int64, set: ReceiptAttributeSet) {
        add(type, valueLength: set.encodedCount) { set.write(into: &$0) }
    }

    /// An attribute whose value is a DER UTF8String.
    mutating func add(_ type: Int64, utf8 text: String) {
        let count = text.utf8.count
        add(type, valueLength: BERNode.headerLength(contentLength: count) + count) { out in
            out.append(0x0C)
            BERNode.appendLength(count, to: &out)
            out.append(contentsOf: text.utf8)
        }
    }

    /// An attribute whose value is a DER UTF8String of a number's decimal digits.
    mutating func add(_ type: Int64, decimalText value: UInt64) {
        let count = ASCIIDecimal.count(value)
        add(type, valueLength: 2 + count) { out in
            out.append(0x0C)
            out.append(UInt8(count))
            ASCIIDecimal.append(value, to: &out)
        }
    }

    /// An attribute whose value is a DER INTEGER.
    mutating func add(_ type: Int64, integer value: Int64) {
        add(type, valueLength: 2 + Self.integerLength(value)) { Self.appendInteger(value, to: &$0) }
    }

    /// An attribute whose value is Apple's receipt date, an IA5String in RFC 3339 (UTC, whole seconds: always
    /// the 20 bytes of `yyyy-MM-ddTHH:mm:ssZ`); nil gives the empty string Apple writes when there is no date.
    mutating func add(_ type: Int64, date ms: Int64?) {
        let count = ms == nil ? 0 : 20
        add(type, valueLength: 2 + count) { out in
            out.append(0x16)
            out.append(UInt8(count))
            if let ms { SimTime.appendRFC3339(SimTime.floorDiv(ms, 1000) * 1000, to: &out) }
        }
    }

    /// The length of `write(into:)`'s output.
    var encodedCount: Int { BERNode.headerLength(contentLength: encodings.count) + encodings.count }

    /// Appends the DER SET OF the attributes added so far.
    func write(into out: inout [UInt8]) {
        // Lexicographic order of the encodings: memcmp of the common prefix, then the shorter first.
        let sorted = encodings.withUnsafeBytes { all in
            ranges.sorted { a, b in
                let order = memcmp(
                    all.baseAddress! + a.lowerBound,
                    all.baseAddress! + b.lowerBound,
                    min(a.count, b.count)
                )
                return order != 0 ? order < 0 : a.count < b.count
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

    /// A DER INTEGER: the fewest two's complement octets (as `BERNode.integer`).
    static func appendInteger(_ value: Int64, to out: inout [UInt8]) {
        let count = integerLength(value)
        out.append(0x02)
        out.append(UInt8(count))
        for k in stride(from: count - 1, through: 0, by: -1) { out.append(UInt8(truncatingIfNeeded: value >> (8 * k))) }
    }

    /// The content octets of a DER INTEGER of `value`.
    static func integerLength(_ value: Int64) -> Int {
        var count = 1
        while count < 8 {
            let top = value >> Int64(count * 8 - 1)
            if top == 0 || top == -1 { break }
            count += 1
        }
        return count
    }
}
