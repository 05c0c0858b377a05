import Foundation

extension DecisionEngine {
    /// Decides a subscription from App Store Server API evidence with the same rules as a verifyReceipt
    /// answer (the transactions and renewal info play `latest_receipt_info` and `pending_renewal_info`), then
    /// takes Apple's status as the state when it names one: Apple computed it at the moment it answered, from
    /// data this run may not see (a family-sharing revocation, a billing retry Apple has not yet given up on).
    /// A disagreement is kept in the notes. See docs/decision-rules.md, "The App Store Server API".
    public static func decide(
        stored: StoredSubscription,
        evidence: SignedSubscriptionEvidence,
        now: Date,
        bundleId: String?
    ) -> Decision {
        let response = VerifyReceiptResponse(
            status: 0,
            environment: evidence.environment,
            receipt: ReceiptInfo(bundleId: evidence.bundleId),
            latestReceiptInfo: evidence.transactions,
            latestReceipt: nil,
            pendingRenewalInfo: evidence.renewalInfo.map { [$0] } ?? []
        )
        var decision = decide(stored: stored, response: response, now: now, bundleId: bundleId)
        guard decision.outcome != .rejected else { return decision }
        decision.signedTransactionInfo = evidence.signedTransactionInfo
        decision.signedRenewalInfo = evidence.signedRenewalInfo
        if let status = evidence.status, let apple = SignedSubscriptionEvidence.state(ofStatus: status),
            apple != decision.state
        {
            // Signed over unsigned: the status field is not signed, so it never takes back a revocation that a
            // verified transaction carries (docs/decision-rules.md, "Precedence").
            if decision.state == .revoked, let revokedAt = decision.revokedAt,
                evidence.transactions.contains(where: {
                    $0.signedFacts != nil && sameInstant($0.cancellationDate, revokedAt)
                })
            {
                decision.notes.append(
                    "Apple's status \(status) (\(apple.rawValue)) is not signed: the signed revocation decides"
                )
                return decision
            }
            decision.notes.append(
                "Apple's status \(status) (\(apple.rawValue)) decides the state; the transactions alone say "
                    + (decision.state?.rawValue ?? "nothing")
            )
            if apple == .revoked, decision.revokedAt == nil {
                let latest = evidence.transactions.filter { $0.cancellationDate != nil && !$0.isUpgraded }
                    .max { ($0.cancellationDate ?? .distantPast) < ($1.cancellationDate ?? .distantPast) }
                decision.revokedAt = latest?.cancellationDate
                decision.cancellationReason = latest?.cancellationReason
            } else if apple != .revoked {
                decision.revokedAt = nil
                decision.cancellationReason = nil
            }
            decision.state = apple
            decision.outcome = outcome(of: decision, comparedWith: stored)
        }
        return decision
    }
}
