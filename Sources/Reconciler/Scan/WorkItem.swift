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
    public let rowExists: Bool

    public init(
        subscriptionId: Int64,
        version: Int64,
        stored: StoredSubscription,
        receipt: String,
        subscriptionGroupId: String?,
        rowExists: Bool = true
    ) {
        self.subscriptionId = subscriptionId
        self.version = version
        self.stored = stored
        self.receipt = receipt
        self.subscriptionGroupId = subscriptionGroupId
        self.rowExists = rowExists
    }
}
