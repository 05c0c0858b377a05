import Foundation

/// A report's header line: where each of Apple's columns is. Names are matched without regard to case and surrounding
/// spaces (Apple writes both "Country of Sale" and "Country Of Sale"); a column a kind needs but the header lacks is a
/// file error naming it.
public struct AppleReportColumns: Sendable {
    /// The header's names as Apple wrote them.
    public let names: [String]
    /// 1-based line of the header.
    public let line: Int
    private let index: [String: Int]

    /// The matching key of a column name.
    static func key(_ name: String) -> String {
        name.trimmingCharacters(in: .whitespaces).lowercased()
    }

    /// - Throws: `AppleReportError` `.duplicateColumns` when a name appears twice.
    init(names: [String], line: Int, file: String) throws(AppleReportError) {
        var index: [String: Int] = [:]
        for (position, name) in names.enumerated() {
            let key = Self.key(name)
            guard !key.isEmpty else { continue }
            guard index[key] == nil else {
                throw AppleReportError(
                    file: file,
                    code: .duplicateColumns,
                    line: line,
                    problem: "the header names the column \"\(name)\" twice"
                )
            }
            index[key] = position
        }
        self.names = names
        self.line = line
        self.index = index
    }

    /// The position of `name` (or of its first `aliases` present), or nil.
    func position(_ name: String, aliases: [String] = []) -> Int? {
        for candidate in [name] + aliases {
            if let position = index[Self.key(candidate)] { return position }
        }
        return nil
    }

    /// - Throws: `.missingColumns` naming every column of `required` the header lacks.
    func require(_ required: [String], kind: AppleReportKind, file: String) throws(AppleReportError) {
        let missing = required.filter { position($0, aliases: AppleReportRowReader.aliases[$0] ?? []) == nil }
        guard missing.isEmpty else {
            throw AppleReportError(
                file: file,
                code: .missingColumns,
                line: line,
                problem: "the \(kind.title) header lacks the column(s) \(missing.joined(separator: ", "))"
            )
        }
    }
}
