import Foundation

/// base64url (RFC 4648 section 5) without padding, as JWS uses it, and plain base64 for `x5c`.
public enum Base64URL {
    /// Decodes base64url text; padding is optional. Nil for any character outside the alphabet.
    public static func decode(_ text: Substring) -> [UInt8]? {
        var standard = String()
        standard.reserveCapacity(text.utf8.count + 3)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "-"): standard.append("+")
            case UInt8(ascii: "_"): standard.append("/")
            case UInt8(ascii: "+"), UInt8(ascii: "/"): return nil
            case UInt8(ascii: "="): continue
            default: standard.unicodeScalars.append(Unicode.Scalar(byte))
            }
        }
        let remainder = standard.utf8.count % 4
        if remainder == 1 { return nil }
        if remainder > 0 { standard.append(String(repeating: "=", count: 4 - remainder)) }
        return Data(base64Encoded: standard).map { [UInt8]($0) }
    }

    /// Encodes bytes as base64url without padding.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var text = Data(bytes).base64EncodedString()
        while text.hasSuffix("=") { text.removeLast() }
        return String(
            text.map { character -> Character in
                switch character {
                case "+": "-"
                case "/": "_"
                default: character
                }
            })
    }
}
