/// Base64url without padding (RFC 4648 §5), the alphabet of JWS and JWT segments.
enum Base64URL {
    static func encode(_ bytes: [UInt8]) -> [UInt8] {
        var out = Base64.encode(bytes)
        while out.last == 61 { out.removeLast() }
        for i in out.indices {
            if out[i] == 43 { out[i] = 45 } else if out[i] == 47 { out[i] = 95 }
        }
        return out
    }

    static func encodeString(_ bytes: [UInt8]) -> String { String(decoding: encode(bytes), as: UTF8.self) }

    /// Decodes a segment; nil for padding, characters of the standard alphabet or anything else not base64url.
    static func decode<S: Sequence>(_ chars: S) -> [UInt8]? where S.Element == UInt8 {
        var standard: [UInt8] = []
        for c in chars {
            switch c {
            case 45: standard.append(43)
            case 95: standard.append(47)
            case 43, 47, 61, 10, 13: return nil
            default: standard.append(c)
            }
        }
        switch standard.count % 4 {
        case 0: break
        case 2: standard += [61, 61]
        case 3: standard.append(61)
        default: return nil
        }
        if standard.isEmpty { return [] }
        return Base64.decode(standard)
    }
}
