import Foundation

/// Reads `--ids-file`: one original_transaction_id per line; blank lines and `#` comments ignored.
public enum IdsFile {
    /// - Throws: `UsageError` naming the file (unreadable) or the line (an id with inner whitespace, a duplicate).
    public static func read(_ path: String) throws -> [String] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw UsageError("--ids-file: cannot read \(path)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw UsageError("--ids-file: \(path) is not UTF-8 text")
        }
        var ids: [String] = []
        var seen: [String: Int] = [:]
        var lineNumber = 0
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            let line = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.contains(where: { $0.isWhitespace || $0 == "," }) {
                throw UsageError(
                    "\(path):\(lineNumber): expected one original_transaction_id per line, got \"\(line.prefix(80))\""
                )
            }
            if let first = seen[line] {
                throw UsageError("\(path):\(lineNumber): \(line) repeats line \(first)")
            }
            seen[line] = lineNumber
            ids.append(line)
        }
        if ids.isEmpty { throw UsageError("--ids-file: \(path) holds no ids") }
        return ids
    }
}
