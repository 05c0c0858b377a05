import AppStoreSignedData
import Foundation
import ReceiptDomain

/// `explain --response` given a Get All Subscription Statuses body: read by the run's own
/// `ServerAPIVerification.readStatuses` (every JWS verified against the environment the data must come from, the
/// envelope's environment checked, every value within bounds) and decided by the run's own `ServerAPIDecision`
/// (Apple's status against the dates, signed data over unsigned), for a new row with no ledger: `explain` prints
/// what the run would store. Output: the usual keys plus `verified`; `apple_status` is null (the App Store Server
/// API has no verifyReceipt status). Anything that does not verify is never decided on: the verdict is `reject`
/// with the refusal as the reason.
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

    /// - Parameters:
    ///   - verifier: the verifier for the environment the signed data must come from (the run has one per
    ///     environment); called with `environment`, else the envelope's, else production.
    ///   - environment: the environment the answer was asked from (`--environment`), if known.
    public static func explain(
        body: [UInt8],
        sourceName: String,
        verifier: (AppleEnvironment) -> SignedDataVerifier,
        environment requested: AppleEnvironment?,
        originalTransactionId: String?,
        bundleId: String?,
        now: Date
    ) throws(ExplainError) -> Outcome {
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
        let environment = requested ?? SignedDataMapping.environment(statuses.environment) ?? .production
        let otid = try chooseSubscription(statuses, requested: originalTransactionId, source: sourceName)
        let fields: [ExplainReport.Field]
        var verified = true
        switch ServerAPIVerification.readStatuses(body, otid: otid, verifier: verifier(environment)) {
        case .found(let status):
            let decision = ServerAPIDecision.decide(
                stored: StoredSubscription(
                    originalTransactionId: otid,
                    userId: "",
                    productId: status.transaction.productId
                ),
                originalTransactionId: otid,
                ledger: [],
                history: [],
                status: status,
                environment: environment,
                bundleId: bundleId,
                now: now
            )
            fields = ExplainReport.fields(of: decision, originalTransactionId: otid, environment: environment)
        case .refused(let reason):
            verified = reason.code != .signedDataRefused
            fields = ExplainReport.fields(rejecting: reason, originalTransactionId: otid, environment: environment)
        case .absent:
            let reason = VerdictReason(.transactionNotFound, detail: "no signed status for \(otid) in the answer")
            fields = ExplainReport.fields(rejecting: reason, originalTransactionId: otid, environment: environment)
        }
        let json = ExplainJSON.object(fields.map { ($0.key, ExplainJSON.from($0.value)) })
            .setting("verified", .bool(verified))
        return Outcome(json: json, verified: verified)
    }

    /// The subscription asked about, or the only one in the answer; several without one named: an error listing
    /// them (their product ids read without trust, for the listing only).
    private static func chooseSubscription(
        _ statuses: StatusResponse,
        requested: String?,
        source: String
    ) throws(ExplainError) -> String {
        if let requested { return requested }
        var found: [(originalTransactionId: String, productId: String)] = []
        for item in statuses.data.flatMap(\.lastTransactions) {
            guard let otid = item.originalTransactionId, !found.contains(where: { $0.originalTransactionId == otid })
            else { continue }
            let product = item.signedTransactionInfo.flatMap {
                SignedDataVerifier.decodeUnverified($0, as: JWSTransactionDecodedPayload.self)?.productId
            }
            found.append((otid, product ?? "?"))
        }
        return try ExplainReport.choose(among: found, source: source, none: "the answer holds no subscription")
    }
}
