import Foundation
import ReceiptDomain

/// One selected subscription as read for verification: the stored row plus what the write needs
/// (its id and the `version` it had, so a concurrent change by the app is detected, never overwritten).
public struct WorkItem: Sendable {
    public let subscriptionId: Int64
    /// The row's `version` when read; the write succeeds only if it is unchanged.
    public let version: Int64
    public let stored: StoredSubscription
    /// The stored receipt; empty when the row is gone (deleted after the scan).
    public let receipt: String
    public let subscriptionGroupId: String?
    /// False when the subscription row was deleted after the run selected it.
    public var rowExists = true
    /// The subscription's ledger as stored (App Store Server API runs only: the evidence beside what Apple
    /// sends now, so later nights read only new history).
    public var ledger: [ReceiptTransaction] = []
    /// How far the Server API's transaction history was read (`subscription_checks.history_through`).
    public var historyThrough: Date? = nil
    /// Why the run selected it (`reconciliation_items.due_reason`): `notification` asks for the whole history
    /// again, since a notification may change an old transaction (a refund of an earlier period).
    public var dueReason: DueReason? = nil
    /// The digest of the ledger the reconciler last wrote for it (`subscription_checks.ledger_digest`, `LedgerDigest`):
    /// when the new decision's ledger has the same, none of its rows is sent again.
    public var storedLedgerDigest: String? = nil
    /// The stored `price_increase_status` and `app_account_token`: what the events of a change compare and name
    /// (docs/events.md), beside the row the engine compares.
    public var storedPriceIncreaseStatus: Int? = nil
    public var storedAppAccountToken: String? = nil
}
