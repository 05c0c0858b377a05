/// HTML escaping for every value the report page shows (text and attribute values alike).
///
/// user_id, product_id and reasons come from customers' devices and Apple: escaping all five
/// significant characters makes markup injection through them impossible.
enum HTMLText {
    /// Escapes `&`, `<`, `>`, `"` and `'`, and drops C0 control characters other than tab and newline
    /// (they are invalid in HTML and XML/SVG).
    static func escape(_ value: String) -> String {
        var out = ""
        out.reserveCapacity(value.utf8.count)
        for scalar in value.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\t", "\n": out.unicodeScalars.append(scalar)
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F || (0xFFFE...0xFFFF).contains(scalar.value) {
                    continue
                }
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
