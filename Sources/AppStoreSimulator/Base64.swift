/// Standard base64 (RFC 4648, with padding) written by hand for speed on the request path.
enum Base64 {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let reverse: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in alphabet.enumerated() { table[Int(c)] = UInt8(i) }
        return table
    }()

    static func encode(_ bytes: [UInt8]) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        let n = bytes.count
        while i + 3 <= n {
            let v = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            out.append(alphabet[Int(v >> 18 & 63)])
            out.append(alphabet[Int(v >> 12 & 63)])
            out.append(alphabet[Int(v >> 6 & 63)])
            out.append(alphabet[Int(v & 63)])
            i += 3
        }
        if n - i == 1 {
            let v = UInt32(bytes[i]) << 16
            out.append(alphabet[Int(v >> 18 & 63)])
            out.append(alphabet[Int(v >> 12 & 63)])
            out.append(61)
            out.append(61)
        } else if n - i == 2 {
            let v = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8
            out.append(alphabet[Int(v >> 18 & 63)])
            out.append(alphabet[Int(v >> 12 & 63)])
            out.append(alphabet[Int(v >> 6 & 63)])
            out.append(61)
        }
        return out
    }

    /// Decodes strictly (padding required, no characters outside the alphabet); line breaks are skipped.
    /// Returns nil for anything else, which the simulator answers with 21002.
    static func decode<C: Collection>(_ chars: C) -> [UInt8]? where C.Element == UInt8 {
        var out = [UInt8]()
        out.reserveCapacity(chars.count / 4 * 3)
        var quad: UInt32 = 0
        var count = 0
        var padding = 0
        var finished = false
        for c in chars {
            if c == 10 || c == 13 { continue }
            if finished { return nil }
            if c == 61 {
                padding += 1
                quad <<= 6
                count += 1
            } else {
                guard padding == 0 else { return nil }
                let v = reverse[Int(c)]
                guard v != 0xFF else { return nil }
                quad = quad << 6 | UInt32(v)
                count += 1
            }
            if count == 4 {
                out.append(UInt8(quad >> 16 & 0xFF))
                if padding < 2 { out.append(UInt8(quad >> 8 & 0xFF)) }
                if padding < 1 { out.append(UInt8(quad & 0xFF)) }
                quad = 0
                count = 0
                if padding > 0 { finished = true }
            }
        }
        guard count == 0, padding <= 2, !out.isEmpty else { return nil }
        return out
    }
}
