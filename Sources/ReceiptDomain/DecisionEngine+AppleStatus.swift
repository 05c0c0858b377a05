import Foundation

extension DecisionEngine {
    /// Apple's status of the latest transaction (App Store Server API) names the state when it disagrees with what
    /// the transactions alone say: Apple computed it at the moment it answered, from data this run may not see (a
    /// family-sharing revocation, a billing retry Apple has not yet given up on). But the status is not signed: it
    /// never takes back a revocation that a verified transaction carries. A disagreement is kept in the notes. See
    /// docs/decision-rules.md, "Precedence".
    static func applyAppleStatus(_ status: Int, to decision: inout Decision, evidence: SubscriptionEvidence) {
        guard let apple = SubscriptionEvidence.state(ofStatus: status), apple != decision.state else { return }
        if decision.state == .revoked, let revokedAt = decision.revokedAt,
            evidence.transactions.contains(where: {
                $0.signedFacts != nil && sameInstant($0.cancellationDate, revokedAt)
            })
        {
            decision.notes.append(
                "Apple's status \(status) (\(apple.rawValue)) is not signed: the signed revocation decides"
            )
            return
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
    }
}
