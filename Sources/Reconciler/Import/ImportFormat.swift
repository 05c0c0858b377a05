/// The layout of an import file: JSON Lines (one object per line) or RFC 4180 CSV with a header row.
///
/// Chosen by explicit override, else by file extension, else by sniffing the first
/// non-blank character (`{` means JSON Lines).
public enum ImportFormat: String, Sendable, Equatable, CaseIterable {
    case jsonLines = "jsonl"
    case csv = "csv"

    /// The format implied by a path's extension (`.jsonl`, `.ndjson`, `.json`, `.csv`), if any.
    public static func fromExtension(of path: String) -> ImportFormat? {
        guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else { return nil }
        switch path[path.index(after: dot)...].lowercased() {
        case "jsonl", "ndjson", "json": return .jsonLines
        case "csv": return .csv
        default: return nil
        }
    }

    /// The format implied by the first bytes of a file (after any BOM): `{` after optional
    /// whitespace means JSON Lines, anything else CSV.
    public static func sniff(_ bytes: some Sequence<UInt8>) -> ImportFormat {
        for byte in bytes {
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0D: continue
            case UInt8(ascii: "{"): return .jsonLines
            default: return .csv
            }
        }
        return .csv
    }
}
