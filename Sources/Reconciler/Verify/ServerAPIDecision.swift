import Foundation
import ReceiptDomain

/// The one decision on what the App Store Server API said about a subscription (docs/decision-rules.md, "The App
/// Store Server API"): the run (`ServerAPIVerification`) and `explain --response` (`SubscriptionStatusExplainer`)
/// both call it with answers read by the same `ServerAPIVerification.readStatuses`, so `explain` prints what the
/// run would store.
enum ServerAPIDecision {
    /// Decides from the stored ledger, the history read now and the verified status of the latest transaction (in
    /// that order of precedence, a later copy of a transaction replacing an earlier one). A rejection is a decision
    /// whose `outcome` is `.rejected` with its `rejectReason`.
    static func decide(
        stored: StoredSubscription,
        originalTransactionId: String,
        ledger: [ReceiptTransaction],
        history: [ReceiptTransaction],
        status: ServerAPIAnswer.Status,
        environment: AppleEnvironment,
        bundleId: String?,
        now: Date
    ) -> Decision {
        var byId: [String: ReceiptTransaction] = [:]
        for transaction in ledger { byId[transaction.transactionId] = transaction }
        for transaction in history { byId[transaction.transactionId] = transaction }
        byId[status.transaction.transactionId] = status.transaction
        var stored = stored
        stored.originalTransactionId = originalTransactionId
        let evidence = SubscriptionEvidence(
            status: status.status,
            environment: environment,
            bundleId: bundleId,
            transactions: byId.values.filter { $0.originalTransactionId == originalTransactionId },
            renewalInfo: status.renewal.map { [$0] } ?? [],
            signedTransactionInfo: status.signedTransaction,
            signedRenewalInfo: status.signedRenewal
        )
        return DecisionEngine.decide(stored: stored, evidence: evidence, now: now, bundleId: bundleId)
    }
}
