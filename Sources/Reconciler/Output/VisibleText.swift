/// Text from customers' devices and Apple (user ids, product ids, reasons) as reports show it: characters that
/// would act instead of showing are replaced by visible ones (docs/reports.md, "Hostile values"), in the CSV files
/// as in the HTML page, beside the formula guard of `CSVWriter` and the markup escaping of `HTMLText`.
///
/// - C0 control characters (ESC starts terminal escape sequences) become their Unicode control pictures
///   (U+2400 + code: `␛` for ESC, `␀` for NUL), DEL becomes `␡`;
/// - C1 control characters, Unicode's bidirectional controls (U+202A–U+202E embeddings and overrides, U+2066–U+2069
///   isolates, U+200E/U+200F/U+061C marks: a right-to-left override makes `gpj.exe` read `exe.jpg`) and the
///   noncharacters U+FFFE/U+FFFF become U+FFFD `�`.
///
/// `kept` lists the controls that stay as they are (tab and line breaks, which the formats quote or allow).
enum VisibleText {
    static func neutralised(_ value: String, keeping kept: Set<Unicode.Scalar>) -> String {
        // Printable ASCII, nearly every value a report writes, has nothing to replace.
        if value.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return value }
        guard value.unicodeScalars.contains(where: { replacement(for: $0) != nil && !kept.contains($0) }) else {
            return value
        }
        var out = String.UnicodeScalarView()
        for scalar in value.unicodeScalars {
            if !kept.contains(scalar), let visible = replacement(for: scalar) {
                out.append(visible)
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }

    /// The visible stand-in of a character that must not reach a report as it is; nil for every other character.
    static func replacement(for scalar: Unicode.Scalar) -> Unicode.Scalar? {
        switch scalar.value {
        case 0x00...0x1F: return Unicode.Scalar(0x2400 + scalar.value)
        case 0x7F: return "\u{2421}"
        case 0x80...0x9F, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069, 0xFFFE, 0xFFFF: return "\u{FFFD}"
        default: return nil
        }
    }
}
