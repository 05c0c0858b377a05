/// Standard base64 (RFC 4648, with padding) written by hand for speed on the request path.
enum Base64 {
    private static let alphabet: [UInt8] = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8
    )
    private static let reverse: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in alphabet.enumerated() { table[Int(c)] = UInt8(i) }
        return table
    }()

    static func encode(_ bytes: [UInt8]) -> [UInt8] {
        let n = bytes.count
        let count = (n + 2) / 3 * 4
        // Written through raw buffers: every answer carries a fresh receipt of several KB, and appending
        // character by character (a capacity check each) was measurable.
        return [UInt8](unsafeUninitializedCapacity: count) { out, initialized in
            alphabet.withUnsafeBufferPointer { table in
                bytes.withUnsafeBufferPointer { src in
                    var i = 0
                    var o = 0
                    while i + 3 <= n {
                        let v = UInt32(src[i]) << 16 | UInt32(src[i + 1]) << 8 | UInt32(src[i + 2])
                        out[o] = table[Int(v >> 18 & 63)]
                        out[o + 1] = table[Int(v >> 12 & 63)]
                        out[o + 2] = table[Int(v >> 6 & 63)]
                        out[o + 3] = table[Int(v & 63)]
                        i += 3
                        o += 4
                    }
                    if n - i == 1 {
                        let v = UInt32(src[i]) << 16
                        out[o] = table[Int(v >> 18 & 63)]
                        out[o + 1] = table[Int(v >> 12 & 63)]
                        out[o + 2] = 61
                        out[o + 3] = 61
                        o += 4
                    } else if n - i == 2 {
                        let v = UInt32(src[i]) << 16 | UInt32(src[i + 1]) << 8
                        out[o] = table[Int(v >> 18 & 63)]
                        out[o + 1] = table[Int(v >> 12 & 63)]
                        out[o + 2] = table[Int(v >> 6 & 63)]
                        out[o + 3] = 61
                        o += 4
                    }
                    initialized = o
                }
            }
        }
    }

    /// Decodes strictly (padding required, no characters outside the alphabet); line breaks are skipped.
    /// Returns nil for anything else, which the simulator answers with 21002.
    static func decode(_ chars: [UInt8]) -> [UInt8]? {
        chars.withUnsafeBytes { decode($0) }
    }

    static func decode(_ chars: UnsafeRawBufferPointer) -> [UInt8]? {
        guard !chars.isEmpty else { return nil }
        var failed = false
        let capacity = chars.count / 4 * 3 + 3
        let table = reverse
        let out = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, initialized in
            table.withUnsafeBufferPointer { rev in
                var o = 0
                var quad: UInt32 = 0
                var count = 0
                var padding = 0
                var finished = false
                var start = 0
                // Fast path: whole quads of alphabet characters, no padding or line breaks.
                if let src = chars.baseAddress?.assumingMemoryBound(to: UInt8.self), let dst = buffer.baseAddress {
                    let n = chars.count
                    while start + 4 < n {
                        let a = rev[Int(src[start])]
                        let b = rev[Int(src[start + 1])]
                        let c = rev[Int(src[start + 2])]
                        let d = rev[Int(src[start + 3])]
                        if (a | b | c | d) & 0xC0 != 0 { break }
                        let v = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                        dst[o] = UInt8(truncatingIfNeeded: v >> 16)
                        dst[o + 1] = UInt8(truncatingIfNeeded: v >> 8)
                        dst[o + 2] = UInt8(truncatingIfNeeded: v)
                        o += 3
                        start += 4
                    }
                }
                for c in UnsafeRawBufferPointer(rebasing: chars[start...]) {
                    if c == 10 || c == 13 { continue }
                    if finished {
                        failed = true
                        break
                    }
                    if c == 61 {
                        padding += 1
                        quad <<= 6
                    } else {
                        let v = rev[Int(c)]
                        if padding != 0 || v == 0xFF {
                            failed = true
                            break
                        }
                        quad = quad << 6 | UInt32(v)
                    }
                    count += 1
                    if count == 4 {
                        if padding > 2 {
                            failed = true
                            break
                        }
                        buffer[o] = UInt8(truncatingIfNeeded: quad >> 16)
                        o += 1
                        if padding < 2 {
                            buffer[o] = UInt8(truncatingIfNeeded: quad >> 8)
                            o += 1
                        }
                        if padding < 1 {
                            buffer[o] = UInt8(truncatingIfNeeded: quad)
                            o += 1
                        }
                        quad = 0
                        count = 0
                        if padding > 0 { finished = true }
                    }
                }
                if count != 0 || o == 0 { failed = true }
                initialized = o
            }
        }
        return failed ? nil : out
    }
}
