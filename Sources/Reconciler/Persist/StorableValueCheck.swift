import Foundation
import ReceiptDomain

/// Finds, before any statement runs, the values of an item's result that PostgreSQL cannot store: the
/// store's second line of defence behind the domain's own bounds (`ValueBounds`), so that one bad value
/// never fails a batch.
///
/// The policy for a value that does not fit (docs/decision-rules.md, "Bounds on Apple's values"):
/// - an **entitlement value** (the decision's texts, dates and integers, its ledger entries) that PostgreSQL
///   cannot store refuses the whole item: it is recorded as `rejected` with reason `implausible_value`
///   naming the field, and its subscription row is not touched (nothing is written from an answer that
///   holds an impossible value, the same rule as the domain's);
/// - a **bookkeeping integer** (Apple's status, the attempt count) that does not fit an `integer` column is
///   stored as NULL: the item keeps its outcome and its reason text still carries the number.
///
/// "Cannot store" means: text with a NUL character; a date outside PostgreSQL's timestamptz range
/// (4713 BC to 294276 AD) or not finite; an integer outside the 32-bit `integer` range. The import refuses the
/// same values line by line, and ids longer than `maxIndexedTextBytes` (docs/operations.md, "Backfill, import,
/// explain").
///
/// Free of the pipeline's types (`problem(in:)` for an `ItemResult` is in StorableValueCheck+ItemResult.swift),
/// so scripts/fuzz can build it with the import parser.
public enum StorableValueCheck {
    /// `integer` columns: `expiration_intent`, `cancellation_reason`, `last_apple_status`, `apple_status`, ...
    public static let integerRange: ClosedRange<Int> = Int(Int32.min)...Int(Int32.max)
    /// 4714-11-24T00:00:00Z BC (Julian day 0), PostgreSQL's earliest timestamptz.
    public static let earliestStorableDate = Date(timeIntervalSince1970: -210_866_803_200)
    /// 294277-01-01T00:00:00Z, just after PostgreSQL's latest timestamptz.
    public static let endOfStorableDates = Date(timeIntervalSince1970: 9_224_318_016_000)

    /// The first value of `decision` (or its ledger) that cannot be stored, or nil.
    public static func problem(in d: Decision) -> String? {
        let texts: [(String, String?)] = [
            ("latest_receipt", d.latestReceipt), ("product_id", d.productId),
            ("auto_renew_product_id", d.autoRenewProductId), ("subscription_group_id", d.subscriptionGroupIdentifier),
            ("latest_transaction_id", d.latestTransactionId), ("environment", d.environment?.rawValue),
            ("app_account_token", d.customer.appAccountToken), ("app_transaction_id", d.customer.appTransactionId),
            ("renewal_currency", d.customer.renewalCurrency),
            ("renewal_billing_plan_type", d.customer.renewalBillingPlanType),
        ]
        let dates: [(String, Date?)] = [
            ("expires_at", d.expiresAt), ("grace_period_expires_at", d.gracePeriodExpiresAt),
            ("revoked_at", d.revokedAt),
        ]
        let integers: [(String, Int?)] = [
            ("expiration_intent", d.expirationIntent), ("cancellation_reason", d.cancellationReason),
            ("price_increase_status", d.customer.priceIncreaseStatus),
        ]
        if let problem = firstProblem(texts: texts, dates: dates, integers: integers, prefix: "") { return problem }
        for (index, entry) in d.ledger.enumerated() {
            let prefix = "ledger[\(index)]."
            let problem = firstProblem(
                texts: [
                    ("transaction_id", entry.transactionId), ("original_transaction_id", entry.originalTransactionId),
                    ("product_id", entry.productId), ("subscription_group_id", entry.subscriptionGroupIdentifier),
                    ("web_order_line_item_id", entry.webOrderLineItemId), ("offer", entry.offer),
                    ("ownership_type", entry.ownershipType),
                    ("offer_identifier", entry.signedFacts?.offerIdentifier),
                    ("offer_period", entry.signedFacts?.offerPeriod),
                    ("app_account_token", entry.signedFacts?.appAccountToken),
                    ("app_transaction_id", entry.signedFacts?.appTransactionId),
                    ("billing_plan_type", entry.signedFacts?.billingPlanType),
                ],
                dates: [
                    ("purchase_date", entry.purchaseDate), ("expires_date", entry.expiresDate),
                    ("cancellation_date", entry.cancellationDate),
                ],
                integers: [("cancellation_reason", entry.cancellationReason)],
                prefix: prefix
            )
            if let problem { return problem }
        }
        return nil
    }

    /// `value` as a parameter for an `integer` column: nil (NULL) when it does not fit.
    public static func integerOrNull(_ value: Int?) -> Int64? {
        guard let value, integerRange.contains(value) else { return nil }
        return Int64(value)
    }

    /// Whether PostgreSQL's timestamptz can hold `date`.
    public static func isStorable(_ date: Date) -> Bool {
        let t = date.timeIntervalSince1970
        return t.isFinite && t >= earliestStorableDate.timeIntervalSince1970
            && t < endOfStorableDates.timeIntervalSince1970
    }

    /// Whether PostgreSQL's text can hold `text` (no NUL character).
    public static func isStorable(_ text: String) -> Bool {
        !ValueBounds.containsNUL(text)
    }

    /// The longest id the import stores (`user_id`, `product_id`, `original_transaction_id`, `bundle_id`): those
    /// columns are indexed, and PostgreSQL refuses a b-tree index entry over about 2,700 bytes; Apple's ids are
    /// tens of characters, so 1,024 bytes leaves a wide margin.
    public static let maxIndexedTextBytes = 1024

    /// Why `text` cannot be stored as an indexed id (a NUL character, or more than `maxIndexedTextBytes`
    /// bytes), never quoting it; nil when it can.
    public static func indexedTextProblem(_ text: String) -> String? {
        if !isStorable(text) { return "contains a NUL character, which the database cannot store" }
        let count = text.utf8.count
        guard count > maxIndexedTextBytes else { return nil }
        return "is \(count) bytes long, more than the \(maxIndexedTextBytes) the database stores for an id"
    }

    /// Text the reconciler writes itself (reasons, errors), made storable: NUL becomes U+FFFD.
    public static func storableText(_ text: String) -> String {
        isStorable(text) ? text : text.replacingOccurrences(of: "\u{0}", with: "\u{FFFD}")
    }

    /// "about year 300000", for a date too far out to print as a timestamp.
    static func approximateYear(_ date: Date) -> String {
        let years = (1970 + date.timeIntervalSince1970 / 31_556_952).rounded(.down)
        guard let year = Int64(exactly: years) else { return "not a finite date" }
        return "about year \(year)"
    }

    private static func firstProblem(
        texts: [(String, String?)],
        dates: [(String, Date?)],
        integers: [(String, Int?)],
        prefix: String
    ) -> String? {
        for (field, value) in texts {
            if let value, !isStorable(value) { return "\(prefix)\(field) contains a NUL character" }
        }
        for (field, value) in dates {
            if let value, !isStorable(value) {
                return "\(prefix)\(field) is outside PostgreSQL's timestamp range (\(approximateYear(value)))"
            }
        }
        for (field, value) in integers {
            if let value, !integerRange.contains(value) {
                return "\(prefix)\(field) \(value) does not fit a 32-bit integer column"
            }
        }
        return nil
    }
}
