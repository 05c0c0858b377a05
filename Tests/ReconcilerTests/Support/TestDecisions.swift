import Foundation
import ReceiptDomain

@testable import Reconciler

/// Decisions and item results built by hand, to hand RunStore exactly the values a test needs (values the
/// domain would refuse included: the store is the second line of defence).
enum TestDecisions {
    /// A non-rejected decision for `item`: Apple's answer as given, one ledger entry for it.
    static func decision(
        _ item: WorkItem,
        state: SubscriptionState = .active,
        expiresAt: Date,
        productId: String? = nil,
        movedBackwards reason: String? = nil,
        expirationIntent: Int? = nil,
        latestReceipt: String? = nil,
        ledgerCancellationReason: Int? = nil,
        outcome: DecisionOutcome = .renewed
    ) -> Decision {
        let product = productId ?? item.stored.productId
        let transactionId = "\(item.stored.originalTransactionId)-t1"
        let entry = LedgerEntry(
            transactionId: transactionId,
            originalTransactionId: item.stored.originalTransactionId,
            productId: product,
            purchaseDate: expiresAt.addingTimeInterval(-30 * 86_400),
            expiresDate: expiresAt,
            kind: .initial,
            replacedByUpgrade: false,
            isTrial: false,
            isIntroOffer: false,
            offer: nil,
            cancellationDate: nil,
            cancellationReason: ledgerCancellationReason,
            webOrderLineItemId: nil,
            subscriptionGroupIdentifier: "g1",
            ownershipType: "PURCHASED"
        )
        return Decision(
            outcome: outcome,
            originalTransactionId: item.stored.originalTransactionId,
            state: state,
            expiresAt: expiresAt,
            productId: product,
            autoRenew: true,
            autoRenewProductId: product,
            expirationIntent: expirationIntent,
            gracePeriodExpiresAt: nil,
            inBillingRetry: false,
            isTrial: false,
            isIntroOffer: false,
            latestTransactionId: transactionId,
            revokedAt: nil,
            cancellationReason: nil,
            environment: .production,
            subscriptionGroupIdentifier: "g1",
            latestReceipt: latestReceipt,
            ledger: [entry],
            expiryMovedBackwards: reason != nil,
            expiryMovedBackwardsReason: reason,
            rejectReason: nil,
            notes: []
        )
    }

    static func decided(_ item: WorkItem, _ decision: Decision, appleStatus: Int = 0) -> ItemResult {
        ItemResult(
            item: item,
            kind: .decided(decision),
            environment: .production,
            appleStatus: appleStatus,
            attempts: 1
        )
    }

    static func rejected(_ item: WorkItem, _ reason: VerdictReason, appleStatus: Int?) -> ItemResult {
        ItemResult(
            item: item,
            kind: .rejected(reason, invalidReceipt: false),
            environment: .production,
            appleStatus: appleStatus,
            attempts: 1
        )
    }
}
