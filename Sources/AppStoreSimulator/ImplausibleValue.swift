/// A value no real verifyReceipt answer holds, put on the latest transaction of a family's first
/// subscription (in `latest_receipt_info` and, when there, `in_app`): a date far beyond any subscription,
/// one near `Int64.max`, or a NUL character in a text field. The answer is otherwise correct; a client
/// must refuse it rather than store it, crash, or fail the batch.
public enum ImplausibleValue: Sendable, Equatable {
    /// `<field>_ms` carries `milliseconds`; the string forms keep the real date (clients use `_ms`).
    case date(field: String, milliseconds: Int64)
    /// The text field `field` carries `value` (added when the transaction has no such field).
    case text(field: String, value: String)

    /// 9,000,000,000,000,000 ms: the year 287,000; beyond what PostgreSQL's timestamptz stores.
    public static let absurdMilliseconds: Int64 = 9_000_000_000_000_000
    /// Just under `Int64.max`: any arithmetic on it in milliseconds or microseconds overflows.
    public static let nearInt64MaxMilliseconds: Int64 = 9_223_372_036_854_775_000

    /// The JSON key this value replaces.
    public var key: String {
        switch self {
        case .date(let field, _): return field + "_ms"
        case .text(let field, _): return field
        }
    }
}
