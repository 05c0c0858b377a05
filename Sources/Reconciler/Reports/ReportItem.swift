import Foundation

/// One row of `reconciliation_items` (a subscription selected by the run) as the reports read it.
public struct ReportItem: Sendable, Equatable {
    public var subscriptionId: Int64
    public var originalTransactionId: String
    public var status = ItemStatus.done
    /// One of `ReportOutcome.all`, or nil while pending.
    public var outcome: String?
    public var userId: String?
    public var previousState: String?
    public var newState: String?
    public var previousExpiresAt: Date?
    public var newExpiresAt: Date?
    public var previousProductId: String?
    public var productId: String?
    public var subscriptionGroupId: String?
    public var autoRenew: Bool?
    public var previousAutoRenew: Bool?
    public var autoRenewProductId: String?
    public var environment: String?
    public var appleStatus: Int?
    public var attempts = 0
    public var reason: String?
    /// The subscription's latest known ledger transaction (up to the new expiry) was a free trial:
    /// used by the trial-conversion chart to count trials that lapsed.
    public var lastTransactionWasTrial = false
    /// Same for an introductory offer.
    public var lastTransactionWasIntroOffer = false
    /// Apple's answer put the expiry earlier than the stored one (refund, upgrade, or a date the app stored
    /// wrongly); `reason` says why.
    public var expiryMovedBackwards = false
    /// Why the run selected it (`reconciliation_items.due_reason`: `unverified`, `window`, `revoked`,
    /// `sweep`, `notification`, `backfill`); nil for items of older runs.
    public var dueReason: String?
    /// The subscription row's `bundle_id` as it is now (the app the run reconciled it for); nil when the row has
    /// none or is gone.
    public var bundleId: String?
    /// Apple's expiration intent and price-increase status as the run decided them (nil for older runs).
    public var expirationIntent: Int? = nil
    public var priceIncreaseStatus: Int? = nil

    /// The item ended as `unresolved`, `rejected` or `conflict`: it belongs in errors.csv.
    public var isError: Bool { outcome.map(ReportOutcome.errors.contains) ?? false }

    /// The subscription's state, expiry, product or auto-renew changed (a done, non-error item):
    /// it belongs in changes.csv. Mirrors SQL's `IS DISTINCT FROM` on each pair.
    public var isChange: Bool {
        guard status == .done, let outcome, !ReportOutcome.errors.contains(outcome) else { return false }
        return previousState != newState || previousExpiresAt != newExpiresAt || previousProductId != productId
            || previousAutoRenew != autoRenew
    }

    /// A done, non-error item whose expiry Apple moved backwards: listed in report.html's own section.
    public var isBackwardsMove: Bool {
        guard status == .done, let outcome, !ReportOutcome.errors.contains(outcome) else { return false }
        return expiryMovedBackwards
    }

    /// The product to group by: the new product, else the previous one, else `(unknown)`.
    public var groupingProductId: String { productId ?? previousProductId ?? ReportOutcome.unknown }
}
