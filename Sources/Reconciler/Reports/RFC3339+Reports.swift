import Foundation

extension RFC3339 {
    /// The same as `string(_:)`, or the empty string for nil (CSV fields).
    static func string(_ date: Date?) -> String { date.map { string($0) } ?? "" }

    /// The UTC calendar day of `date`: `2024-05-01` (the report folder's date).
    static func day(_ date: Date) -> String { String(string(date).prefix(10)) }
}
