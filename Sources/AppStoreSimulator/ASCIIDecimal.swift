/// Integers written as ASCII decimal digits straight into a byte buffer, for the request path: the answers
/// and receipts carry dozens of ids and milliseconds each, and `String(value)` then copying its UTF-8 was a
/// heap allocation per number. Same digits as `String(value)`.
enum ASCIIDecimal {
    /// The number of digits of `value`.
    static func count(_ value: UInt64) -> Int {
        var digits = 1
        var rest = value / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        return digits
    }

    static func append(_ value: UInt64, to out: inout [UInt8]) {
        if value < 10 {
            out.append(48 + UInt8(value))
            return
        }
        let digits = count(value)
        let start = out.count
        out.append(contentsOf: repeatElement(48, count: digits))
        out.withUnsafeMutableBufferPointer { buffer in
            var v = value
            var i = start + digits - 1
            while v > 0 {
                buffer[i] = 48 + UInt8(v % 10)
                v /= 10
                i -= 1
            }
        }
    }

    static func append(_ value: Int64, to out: inout [UInt8]) {
        if value < 0 { out.append(45) }
        append(value.magnitude, to: &out)
    }
}
