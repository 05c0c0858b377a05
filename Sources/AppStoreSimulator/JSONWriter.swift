/// A minimal JSON writer into a byte array: objects, arrays, strings, raw numbers and booleans.
///
/// Hand-rolled because responses are rendered on the request path and must be byte-stable (keys in
/// the order written, never a Dictionary's order).
struct JSONWriter {
    var bytes: [UInt8] = []
    /// Per open container: has it had a member yet (so the next one needs a comma)?
    private var hasMember: [Bool] = []
    private var afterKey = false

    init(capacity: Int = 1024) { bytes.reserveCapacity(capacity) }

    private mutating func valueStart() {
        if afterKey {
            afterKey = false
            return
        }
        if let last = hasMember.last {
            if last { bytes.append(44) }
            hasMember[hasMember.count - 1] = true
        }
    }

    mutating func beginObject() {
        valueStart()
        bytes.append(123)
        hasMember.append(false)
    }

    mutating func endObject() {
        hasMember.removeLast()
        bytes.append(125)
    }

    mutating func beginArray() {
        valueStart()
        bytes.append(91)
        hasMember.append(false)
    }

    mutating func endArray() {
        hasMember.removeLast()
        bytes.append(93)
    }

    /// Writes `"key":`; the value written next belongs to it.
    mutating func key(_ k: String) {
        valueStart()
        appendEscaped(k)
        bytes.append(58)
        afterKey = true
    }

    /// Writes `"key<suffix>":` (Apple's date fields come as `x`, `x_ms` and `x_pst`; no string is built for
    /// the suffixed key).
    mutating func key(_ k: String, suffix: String) {
        valueStart()
        bytes.append(34)
        appendEscapedContent(k)
        appendEscapedContent(suffix)
        bytes.append(34)
        bytes.append(58)
        afterKey = true
    }

    /// A string value whose bytes `write` appends; they must need no JSON escaping (digits, dates).
    mutating func quoted(_ write: (inout [UInt8]) -> Void) {
        valueStart()
        bytes.append(34)
        write(&bytes)
        bytes.append(34)
    }

    /// `"123"`: Apple sends ids and milliseconds as strings.
    mutating func quotedDecimal(_ v: UInt64) {
        quoted { ASCIIDecimal.append(v, to: &$0) }
    }

    mutating func quotedDecimal(_ v: Int64) {
        quoted { ASCIIDecimal.append(v, to: &$0) }
    }

    /// A value that is a copy of bytes this writer already wrote (`range`, e.g. an object written earlier).
    mutating func copy(of range: Range<Int>) {
        valueStart()
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: range.count))
        bytes.withUnsafeMutableBufferPointer { buffer in
            let base = buffer.baseAddress!
            (base + start).update(from: base + range.lowerBound, count: range.count)
        }
    }

    mutating func string(_ s: String) {
        valueStart()
        appendEscaped(s)
    }

    mutating func raw(_ s: String) {
        valueStart()
        bytes.append(contentsOf: s.utf8)
    }

    mutating func rawString(_ b: [UInt8]) {
        valueStart()
        bytes.append(34)
        bytes.append(contentsOf: b)
        bytes.append(34)
    }

    mutating func null() { raw("null") }

    mutating func bool(_ b: Bool) { raw(b ? "true" : "false") }

    mutating func int(_ v: Int64) { raw(String(v)) }

    mutating func field(_ k: String, _ v: String) {
        key(k)
        string(v)
    }

    mutating func optionalField(_ k: String, _ v: String?) {
        key(k)
        if let v { string(v) } else { null() }
    }

    private mutating func appendEscaped(_ s: String) {
        bytes.append(34)
        appendEscapedContent(s)
        bytes.append(34)
    }

    private mutating func appendEscapedContent(_ s: String) {
        // Fast path: keys and most values need no escaping; copy their UTF-8 in one go instead of byte by byte
        // (the byte loop was the renderer's largest cost of its own).
        var text = s
        let copied = text.withUTF8 { utf8 -> Bool in
            guard !utf8.contains(where: { $0 < 32 || $0 == 34 || $0 == 92 }) else { return false }
            bytes.append(contentsOf: utf8)
            return true
        }
        if copied { return }
        for c in s.utf8 {
            switch c {
            case 34: bytes += [92, 34]
            case 92: bytes += [92, 92]
            case 0..<32:
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                bytes += [92, 117, 48, 48, hex[Int(c >> 4)], hex[Int(c & 15)]]
            default: bytes.append(c)
            }
        }
    }
}
