import Foundation
import ReceiptDomain

/// One validated subscription row from an import file (JSONL or CSV): who owns it, which
/// subscription it is, the stored receipt to re-verify and the expiry the caller believed.
///
/// Produced only by `ImportParser`, which has already checked every field; `line` is the
/// physical line where the record starts, for later error messages.
public struct ImportRecord: Sendable, Equatable {
    /// Physical line number (1-based) of the record's first line in the file.
    public let line: Int
    public let userId: String
    public let productId: String
    /// Apple's `original_transaction_id`: non-empty, no whitespace, unique within the file.
    public let originalTransactionId: String
    /// The stored base64 app receipt (standard alphabet). Never log it: use `receiptSummary`.
    public let latestReceipt: String
    public let expiresAt: Date
    /// The App Store environment the receipt belongs to, normalised from any letter case.
    public let environment: AppleEnvironment?
    public let bundleId: String?
    /// The customer's currency (ISO 4217) as the app knew it at purchase, which prices the subscription's
    /// verifyReceipt transactions with the catalog (docs/reports.md, "Money from the catalog"); nil: unknown.
    public let currency: String?
    /// The UUID the app set as the purchase's `appAccountToken` (lowercase), when it set one: the link between
    /// Apple's data and the app's user that Apple's answers then confirm (docs/decision-rules.md, "What the row
    /// keeps beside the entitlement").
    public let appAccountToken: String?

    /// A loggable stand-in for the receipt: its first 16 characters and its length.
    public var receiptSummary: String {
        let prefix = latestReceipt.prefix(16)
        return prefix.count < latestReceipt.count ? "\(prefix)… (\(latestReceipt.utf8.count) chars)" : "\(prefix)"
    }
}
