/// Why a body is not a usable verifyReceipt response.
///
/// The description names the problem and the field path (e.g. `latest_receipt_info[2].expires_date_ms`)
/// or byte offset; it quotes at most a short, truncated excerpt of a value and never a receipt.
public struct ReceiptParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, Equatable {
        /// The bytes are not JSON (or are truncated JSON).
        case notJSON = "not_json"
        /// JSON, but the top level is not an object.
        case notAnObject = "not_an_object"
        /// JSON object without a `status` member.
        case missingStatus = "missing_status"
        /// A member has a type or value that cannot be read as what verifyReceipt sends.
        case invalidField = "invalid_field"
        /// A required member of a transaction is absent.
        case missingField = "missing_field"
        /// A member reads fine but its value is outside the bounds in docs/decision-rules.md ("Bounds on
        /// Apple's values"): Apple's answer is refused for this receipt (`implausible_value`), not retried.
        case implausibleValue = "implausible_value"
    }

    public let code: Code
    /// Dotted path of the offending field, when the problem is a field.
    public let field: String?
    /// Byte offset, when the problem is the JSON syntax.
    public let byteOffset: Int?
    /// A short human explanation.
    public let detail: String

    public init(code: Code, field: String? = nil, byteOffset: Int? = nil, detail: String) {
        self.code = code
        self.field = field
        self.byteOffset = byteOffset
        self.detail = detail
    }

    public var description: String {
        switch code {
        case .notJSON:
            return "not JSON at byte \(byteOffset ?? 0): \(detail)"
        case .notAnObject:
            return "not a verifyReceipt response: \(detail)"
        case .missingStatus:
            return "no `status` field: is this a verifyReceipt response?"
        case .invalidField, .missingField, .implausibleValue:
            return "field `\(field ?? "?")`: \(detail)"
        }
    }
}
