/// A problem with one record of an import file, naming the physical line where the record
/// starts, the field, and what is wrong; a receipt's content is never included (length only).
///
/// `description` reads like `line 17: expires_at: "2024-13-01" is not an RFC 3339 timestamp`.
public struct ImportLineError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of problem, for callers that count or group errors.
    public enum Code: String, Sendable, Equatable {
        case missingField
        case emptyField
        case invalidValue
        case invalidTimestamp
        case invalidReceipt
        case duplicateTransaction
        case malformedCSV
        case malformedJSON
        case wrongFieldCount
        case recordTooLong
        case invalidUTF8
        /// A value PostgreSQL cannot store: a NUL character, an id longer than its index holds, a date out of range.
        case unstorableValue
        case readFailed
    }

    /// Physical line number (1-based) of the record's first line.
    public let line: Int
    /// The field (JSON key or CSV column) concerned, if the problem is in one field.
    public let field: String?
    public let code: Code
    /// What is wrong, e.g. `"2024-13-01" is not an RFC 3339 timestamp`.
    public let problem: String
    /// For `duplicateTransaction`: the line of the first occurrence.
    public var firstLine: Int? = nil

    public var description: String {
        "line \(line): " + (field.map { "\($0): " } ?? "") + problem
    }
}
