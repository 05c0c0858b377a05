/// One app receipt's family: a user, the subscriptions their receipt holds (one, or two in different
/// groups), the environment and bundle id, and what the app stored the last time it saw the receipt.
public struct ReceiptFamily: Sendable {
    public var index: Int
    public var scenario: Scenario
    public var userId: String
    /// The bundle id inside the receipt (another app's for `foreign_app`).
    public var bundleId: String
    /// The bundle id of the app that stored the row (the population's, even for a foreign receipt).
    public var appBundleId: String
    public var sandbox: Bool
    public var subscriptions: [SubscriptionPlan]
    /// When the app last refreshed its stored receipt: the stored receipt's creation time.
    public var storedReceiptAt: Int64
    public var storedIssueSequence: UInt32
    /// Receipt padding per transaction covered, so receipt size grows with history.
    public var bytesPerTransaction: Int
    /// A status Apple answers for this receipt whatever is sent (21003 unauthenticatable, 21010 deleted).
    public var fixedStatus: Int?
    /// The app stored a corrupt receipt (not base64): Apple answers 21002.
    public var malformedStoredReceipt: Bool
    /// The expiry the app stored when it is not its receipt's (an app-side bug); nil: the receipt's.
    public var appStoredExpiry: Int64?
    /// A value Apple's status-0 answer carries that no client may store (see `ImplausibleValue`).
    public var implausibleValue: ImplausibleValue?
    /// A previous night's run verified the rows at this instant (what it left is in `truth.jsonl`,
    /// `prior_run`; the import cannot carry a state, so the demo seeds it).
    public var priorRunAt: Int64?
    /// When the app was first downloaded (receipt `original_purchase_date`).
    public var appDownloadedAt: Int64

    /// Base padding of every receipt, in bytes before base64.
    public static let baseReceiptBytes = 2400
    public static let defaultBytesPerTransaction = 160
    public static let longHistoryBytesPerTransaction = 900

    /// Number of transactions (all subscriptions) that exist at `instant`.
    public func transactionCount(at instant: Int64) -> Int {
        subscriptions.reduce(0) { $0 + $1.timeline(at: instant).transactions.count }
    }

    /// What the app stored for `plan`: the product and expiry of the best transaction its stored receipt
    /// shows (refunds left out), or `appStoredExpiry` when the app stored another expiry.
    public func storedRow(_ plan: SubscriptionPlan) -> (productId: String, expires: Int64) {
        let seen = plan.timeline(at: storedReceiptAt).transactions
        let best = seen.filter { !$0.isRefunded }.max { $0.expires < $1.expires } ?? seen.last
        return (best?.product.productId ?? plan.product.productId, appStoredExpiry ?? best?.expires ?? plan.start)
    }

    /// The primary original_transaction_id (first subscription), sealed into the receipt.
    public var primaryOriginalTransactionId: UInt64 { subscriptions.first?.originalTransactionId ?? 0 }
}
