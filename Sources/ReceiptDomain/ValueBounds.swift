import Foundation

/// The bounds every value read from Apple must meet before anything is decided or stored
/// (docs/decision-rules.md, "Bounds on Apple's values"). A value outside them makes the whole answer
/// `implausible_value` for that receipt: refused, nothing changed, never a crash, never a failed batch.
public enum ValueBounds {
    /// The App Store opened on 2008-07-10; no purchase, expiry or renewal date is earlier.
    public static let earliestMilliseconds: Int = 1_214_870_400_000  // 2008-07-01T00:00:00Z
    /// A ceiling no real subscription date reaches (PostgreSQL stores far more; this is about sanity).
    public static let latestMilliseconds: Int = 4_102_444_800_000  // 2100-01-01T00:00:00Z
    /// Integers are stored in 32-bit columns (status, quantity, reasons, intents).
    public static let integerRange: ClosedRange<Int> = Int(Int32.min)...Int(Int32.max)
    /// Ids, product ids, names, tokens: Apple's are tens of characters.
    public static let maxTextLength = 4096
    /// `latest_receipt`: real receipts reach a few hundred kilobytes.
    public static let maxReceiptLength = 16 * 1024 * 1024

    /// The date for `milliseconds`, or an error naming `field` when it is outside the bounds.
    static func date(milliseconds: Int, field: @autoclosure () -> String) throws(ReceiptParseError) -> Date {
        guard milliseconds >= earliestMilliseconds, milliseconds < latestMilliseconds else {
            throw ReceiptParseError(
                code: .implausibleValue,
                field: field(),
                detail: "\(milliseconds) ms is outside 2008-07-01..2100-01-01"
            )
        }
        return Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    static func integer(_ value: Int, field: @autoclosure () -> String) throws(ReceiptParseError) -> Int {
        guard integerRange.contains(value) else {
            throw ReceiptParseError(code: .implausibleValue, field: field(), detail: "\(value) does not fit 32 bits")
        }
        return value
    }

    /// Whether `text` holds a NUL character, which PostgreSQL's text cannot store. With `memchr` over the
    /// string's contiguous UTF-8 (receipts are kilobytes, and a byte-by-byte search was a measurable share
    /// of the run's CPU).
    public static func containsNUL(_ text: String) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { bytes in
            guard let base = bytes.baseAddress else { return false }
            return memchr(base, 0, bytes.count) != nil
        } ?? text.utf8.contains(0)
    }

    /// Refuses NUL (PostgreSQL text cannot hold it) and text longer than `maxLength` UTF-8 bytes.
    static func text(
        _ value: String,
        maxLength: Int,
        field: @autoclosure () -> String
    ) throws(ReceiptParseError)
        -> String
    {
        let utf8 = value.utf8
        guard utf8.count <= maxLength else {
            throw ReceiptParseError(
                code: .implausibleValue,
                field: field(),
                detail: "\(utf8.count) bytes, more than \(maxLength)"
            )
        }
        if Self.containsNUL(value) {
            throw ReceiptParseError(code: .implausibleValue, field: field(), detail: "contains a NUL character")
        }
        return value
    }
}
