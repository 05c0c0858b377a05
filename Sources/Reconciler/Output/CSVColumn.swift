/// One column of a CSV report: its header name and whether its values are text or numbers.
///
/// The kind decides CSV-injection neutralisation: text values starting with `=`, `+`, `-`,
/// `@`, tab or CR are prefixed with `'`; numeric values such as `-5` are left alone.
public struct CSVColumn: Sendable, Equatable {
    /// How a column's values are treated.
    public enum Kind: Sendable, Equatable {
        /// Free text: neutralised against formula injection.
        case text
        /// Numbers (and dates, counts, amounts): written as is when they look like a number
        /// (dates start with a digit and are never touched), neutralised like text otherwise, so a
        /// mislabelled column cannot smuggle a formula.
        case numeric
    }

    public let name: String
    public let kind: Kind

    public init(_ name: String, _ kind: Kind = .text) {
        self.name = name
        self.kind = kind
    }
}
