import AppStoreSignedData
import Foundation
import ReceiptDomain

/// `explain --response` given a Get All Subscription Statuses body: every signed transaction and renewal
/// info is verified, mapped onto the engine's inputs (`SignedDataMapping`) and decided by the same
/// `ExplainReport` / `DecisionEngine` as a verifyReceipt response. Output: the usual keys plus `verified`;
/// `apple_status` is null (the App Store Server API has no verifyReceipt status). Anything that does not
/// verify is never decided on: the verdict is `reject` with the refusal as the reason.
public enum SubscriptionStatusExplainer {
    public struct Outcome: Sendable {
        public let json: ExplainJSON
        public let verified: Bool
    }

    /// True when the body looks like a Get All Subscription Statuses response (a `data` array and no
    /// verifyReceipt `status`).
    public static func recognizes(_ body: [UInt8]) -> Bool {
        guard let keys = GenericJSON.parse(body)?.keys else { return false }
        return keys.contains("data") && !keys.contains("status")
    }

    public static func explain(
        body: [UInt8],
        sourceName: String,
        verifier: SignedDataVerifier,
        originalTransactionId: String?,
        bundleId: String?,
        now: Date
    ) throws -> Outcome {
        let statuses: StatusResponse
        do {
            statuses = try StatusResponse.decode(body)
        } catch {
            throw ExplainError(
                code: .unreadable,
                source: sourceName,
                problem: "not a Get All Subscription Statuses body: \(error.detail)"
            )
        }
        var transactions: [ReceiptTransaction] = []
        var renewals: [PendingRenewalInfo] = []
        var signedBundle: String?
        var refusal: String?
        outer: for group in statuses.data {
            for item in group.lastTransactions {
                do {
                    if let signed = item.signedTransactionInfo {
                        let transaction = try verifier.verifyTransaction(signed)
                        signedBundle = signedBundle ?? transaction.bundleId
                        if let mapped = SignedDataMapping.transaction(transaction) { transactions.append(mapped) }
                    }
                    if let signed = item.signedRenewalInfo {
                        renewals.append(SignedDataMapping.renewal(try verifier.verifyRenewalInfo(signed)))
                    }
                } catch {
                    refusal = "original_transaction_id \(item.originalTransactionId ?? "?"): \(error.description)"
                    break outer
                }
            }
        }
        let environment = SignedDataMapping.environment(statuses.environment)
        if let refusal {
            let json = ExplainJSON.object(ExplainReport.keys.map { ($0, ExplainJSON.null) })
                .setting("environment", .string(environment?.rawValue))
                .setting("verdict", .string("reject"))
                .setting("retryable", .bool(false))
                .setting("reason", .string("signed data refused: \(refusal)"))
                .setting("original_transaction_id", .string(originalTransactionId))
                .setting("verified", .bool(false))
            return Outcome(json: json, verified: false)
        }
        let response = VerifyReceiptResponse(
            status: 0,
            environment: environment,
            receipt: ReceiptInfo(bundleId: signedBundle ?? statuses.bundleId),
            latestReceiptInfo: transactions,
            pendingRenewalInfo: renewals
        )
        let report = try ExplainReport.build(
            response: response,
            sourceName: sourceName,
            originalTransactionId: originalTransactionId,
            bundleId: bundleId,
            now: now,
            environment: environment
        )
        let json = ExplainJSON.object(report.fields.map { ($0.key, ExplainJSON.from($0.value)) })
            .setting("apple_status", .null)
            .setting("verified", .bool(true))
        return Outcome(json: json, verified: true)
    }
}
