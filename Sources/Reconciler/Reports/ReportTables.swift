import CivilTime

/// The rows of the three CSV files (changes, transactions, errors) as plain strings in a stable
/// column order, built from `ReportData`. The HTML tables show the same rows.
///
/// Values are not escaped here: `ReportFiles` encodes them with `CSVWriter`, `ReportHTML` escapes them for HTML.
public enum ReportTables {
    /// changes.csv columns, in order (`expiry_moved_backwards` and `reason` last, after the original columns).
    public static let changeColumns = [
        "original_transaction_id", "user_id", "product_id", "previous_state", "new_state", "previous_expires_at",
        "new_expires_at", "outcome", "auto_renew", "auto_renew_product_id", "environment", "apple_status",
        "expiry_moved_backwards", "reason",
    ]
    /// Columns of changes.csv that hold numbers, dates or booleans (never neutralised when they look numeric).
    public static let changeNumericColumns: Set<String> = [
        "previous_expires_at", "new_expires_at", "auto_renew", "apple_status", "expiry_moved_backwards",
    ]

    /// Columns of report.html's "Expiry moved backwards" table (no CSV of its own: changes.csv has these rows
    /// with `expiry_moved_backwards` true).
    public static let backwardsColumns = [
        "original_transaction_id", "user_id", "previous_expires_at", "new_expires_at", "product_change", "reason",
    ]

    /// transactions.csv columns, in order.
    public static let transactionColumns = [
        "transaction_id", "original_transaction_id", "product_id", "purchase_date", "expires_date", "kind", "is_trial",
        "is_intro_offer", "offer", "cancellation_date", "cancellation_reason", "purchase_counted_in",
        "refund_counted_in",
    ]
    public static let transactionNumericColumns: Set<String> = [
        "purchase_date", "expires_date", "is_trial", "is_intro_offer", "cancellation_date", "cancellation_reason",
    ]

    /// errors.csv columns, in order.
    public static let errorColumns = [
        "original_transaction_id", "user_id", "product_id", "outcome", "apple_status", "attempts", "reason",
    ]
    public static let errorNumericColumns: Set<String> = ["apple_status", "attempts"]

    /// Changed items (see `ReportItem.isChange`), ordered by original transaction id.
    public static func changeRows(_ data: ReportData) -> [[String]] {
        data.items.filter(\.isChange).sorted(by: itemOrder).map(changeRow)
    }

    /// Items whose expiry moved backwards (see `ReportItem.isBackwardsMove`), ordered by original transaction id.
    public static func backwardsRows(_ data: ReportData) -> [[String]] {
        data.items.filter(\.isBackwardsMove).sorted(by: itemOrder).map(backwardsRow)
    }

    /// Transactions first seen (or refunded) in the run, each subscription's together: ordered by original
    /// transaction id, then purchase date (undated last) and transaction id, as `ReportLoader` streams them.
    public static func transactionRows(_ data: ReportData) -> [[String]] {
        data.transactions.sorted {
            ($0.originalTransactionId, $0.purchaseDate ?? .distantFuture, $0.transactionId)
                < ($1.originalTransactionId, $1.purchaseDate ?? .distantFuture, $1.transactionId)
        }.map(transactionRow)
    }

    /// Unresolved, rejected and conflict items with their reason, ordered by original transaction id.
    public static func errorRows(_ data: ReportData) -> [[String]] {
        data.items.filter(\.isError).sorted(by: itemOrder).map(errorRow)
    }

    /// One changes.csv row (in `changeColumns` order).
    public static func changeRow(_ item: ReportItem) -> [String] {
        [
            item.originalTransactionId, item.userId ?? "", item.productId ?? item.previousProductId ?? "",
            item.previousState ?? "", item.newState ?? "", RFC3339.string(item.previousExpiresAt),
            RFC3339.string(item.newExpiresAt), item.outcome ?? "", bool(item.autoRenew),
            item.autoRenewProductId ?? "", item.environment ?? "", item.appleStatus.map(String.init) ?? "",
            bool(item.expiryMovedBackwards), item.reason ?? "",
        ]
    }

    /// One row of the "Expiry moved backwards" table (in `backwardsColumns` order).
    public static func backwardsRow(_ item: ReportItem) -> [String] {
        var productChange = ""
        if let previous = item.previousProductId, let product = item.productId, previous != product {
            productChange = "\(previous) -> \(product)"
        }
        return [
            item.originalTransactionId, item.userId ?? "", RFC3339.string(item.previousExpiresAt),
            RFC3339.string(item.newExpiresAt), productChange, item.reason ?? "",
        ]
    }

    /// One transactions.csv row (in `transactionColumns` order).
    public static func transactionRow(_ transaction: ReportTransaction) -> [String] {
        [
            transaction.transactionId, transaction.originalTransactionId, transaction.productId,
            RFC3339.string(transaction.purchaseDate), RFC3339.string(transaction.expiresDate), transaction.kind,
            bool(transaction.isTrial), bool(transaction.isIntroOffer), transaction.offer ?? "",
            RFC3339.string(transaction.cancellationDate), transaction.cancellationReason.map(String.init) ?? "",
            transaction.purchaseScope?.rawValue ?? "", transaction.refundScope?.rawValue ?? "",
        ]
    }

    /// One errors.csv row (in `errorColumns` order).
    public static func errorRow(_ item: ReportItem) -> [String] {
        [
            item.originalTransactionId, item.userId ?? "", item.productId ?? item.previousProductId ?? "",
            item.outcome ?? "", item.appleStatus.map(String.init) ?? "", String(item.attempts), item.reason ?? "",
        ]
    }

    static func bool(_ value: Bool?) -> String {
        guard let value else { return "" }
        return value ? "true" : "false"
    }

    static func itemOrder(_ a: ReportItem, _ b: ReportItem) -> Bool {
        (a.originalTransactionId, a.subscriptionId) < (b.originalTransactionId, b.subscriptionId)
    }
}
