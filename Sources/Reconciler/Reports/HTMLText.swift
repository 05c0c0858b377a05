/// HTML escaping for every value the report page shows (text and attribute values alike).
///
/// user_id, product_id and reasons come from customers' devices and Apple: escaping all five
/// significant characters makes markup injection through them impossible.
enum HTMLText {
    /// Escapes `&`, `<`, `>`, `"` and `'`, and shows control and bidirectional characters other than tab and
    /// newline as visible ones (`VisibleText`: they are invalid in HTML and XML/SVG, or reorder the text around them).
    /// The controls the page keeps as they are (whitespace in HTML).
    static let keptControls: Set<Unicode.Scalar> = ["\t", "\n"]

    static func escape(_ value: String) -> String {
        var out = ""
        out.reserveCapacity(value.utf8.count)
        for scalar in VisibleText.neutralised(value, keeping: keptControls).unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
