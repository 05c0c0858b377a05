/// Why an App Store Connect report file was not imported: the file, and for a bad row its line and column.
///
/// `description` reads like `Subscriber_2026-11-20.txt.gz: line 17: Customer Price: "4,99" is not a decimal amount`.
/// Nothing of a file with an error is stored (docs/apple-reports.md, "Importing").
public struct AppleReportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of problem.
    public enum Code: String, Sendable, Equatable {
        case cannotOpen
        /// A gzip stream that is damaged or ends before its end (a truncated download).
        case corruptGzip
        case invalidUTF8
        /// No line looks like the header of a report this build knows.
        case unknownHeader
        case missingColumns
        case duplicateColumns
        /// A row whose number of fields is not the header's.
        case wrongFieldCount
        /// A required field left empty.
        case missingValue
        /// A number, date, currency or code that does not parse.
        case invalidValue
        /// A value PostgreSQL cannot store (a NUL character, a number out of range).
        case unstorableValue
        /// Apple's own row count at the end of the file disagrees with the rows read.
        case totalMismatch
        /// A Subscription report (no date column) whose day neither the file name nor `--date` gives.
        case missingDate
    }

    /// The file as the caller named it.
    public let file: String
    public let code: Code
    /// Physical line number (1-based) of the row, when the problem is in one row.
    public var line: Int? = nil
    /// Apple's column name, when the problem is in one field.
    public var column: String? = nil
    /// What is wrong; never more than a short quote of the value.
    public let problem: String

    public var description: String {
        "\(file): " + (line.map { "line \($0): " } ?? "") + (column.map { "\($0): " } ?? "") + problem
    }
}
