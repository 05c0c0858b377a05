import AppStoreClient
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
    /// verifyReceipt `status`) or an App Store Server API error answer (an `errorCode`).
    public static func recognizes(_ body: [UInt8]) -> Bool {
        guard let keys = GenericJSON.parse(body)?.keys, !keys.contains("status") else { return false }
        return keys.contains("data") || keys.contains("errorCode")
    }

    /// Apple's error code in an App Store Server API error answer (`{"errorCode": 4040010, ...}`), if the body is one.
    static func errorCode(_ body: [UInt8]) -> Int64? {
        guard case .object(let members)? = GenericJSON.parse(body)?.value, !members.contains(where: { $0.0 == "data" }),
            case .integer(let code)? = members.first(where: { $0.0 == "errorCode" })?.1
        else { return nil }
        return code
    }

    /// An error answer, as the run takes it when it is the last answer for the subscription: its class by the
    /// run's own `ServerAPIErrorClass` (the HTTP status is the code's first three digits, as Apple numbers them) and
    /// its meaning by the run's own `ServerAPIVerification.refusal`: 4040010 a subscription Apple does not know (the
    /// run asks the other environment once first), a retryable code `retry` (the row stays unresolved once the run's
    /// attempts are spent), 401 `config_error`, anything else `reject`.
    static func explainError(code: Int64, otid: String?, environment: AppleEnvironment?) -> Outcome {
        let httpStatus = Int(code / 10_000)
        let classification = ServerAPIErrorClass.classify(httpStatus: httpStatus, errorCode: Int(code), transport: nil)
        let described = "HTTP \(httpStatus), errorCode \(code)"
        let reason =
            ServerAPIVerification.refusal(
                of: classification,
                httpStatus: httpStatus,
                described: described,
                otid: otid ?? "the subscription"
            ) ?? VerdictReason(.serverAPIError, httpStatus: httpStatus, detail: ServerAPIVerification.unauthorized)
        let fields = ExplainReport.fields(rejecting: reason, originalTransactionId: otid, environment: environment)
        let rejected = outcome(fields, verified: true)
        let verdict: String
        switch classification {
        case .unauthorized: verdict = "config_error"
        case .rateLimited, .retryable: verdict = "retry"
        default: return rejected
        }
        let json = rejected.json.setting("verdict", .string(verdict)).setting("retryable", .bool(verdict == "retry"))
        return Outcome(json: json, verified: true)
    }

    /// - Parameters:
    ///   - verifier: the verifier for the environment the signed data must come from (the run has one per
    ///     environment); called with `environment`, else the envelope's, else production.
    ///   - environment: the environment the answer was asked from (`--environment`), if known.
    ///   - history: Get Transaction History pages the run read after this answer (`--history`), in order: their
    ///     transactions join the decision as they join the run's.
    public static func explain(
        body: [UInt8],
        history: [[UInt8]] = [],
        sourceName: String,
        verifier: (AppleEnvironment) -> SignedDataVerifier,
        environment requested: AppleEnvironment?,
        originalTransactionId: String?,
        bundleId: String?,
        now: Date
    ) throws(ExplainError) -> Outcome {
        if let code = errorCode(body) {
            return explainError(code: code, otid: originalTransactionId, environment: requested)
        }
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
            let transactions: [ReceiptTransaction]
            switch readHistory(history, otid: otid, verifier: verifier(environment)) {
            case .found(let page): transactions = page.transactions
            case .refused(let reason):
                verified = reason.code != .signedDataRefused
                fields = ExplainReport.fields(rejecting: reason, originalTransactionId: otid, environment: environment)
                return outcome(fields, verified: verified)
            }
            let decision = ServerAPIDecision.decide(
                stored: StoredSubscription(
                    originalTransactionId: otid,
                    userId: "",
                    productId: status.transaction.productId
                ),
                originalTransactionId: otid,
                ledger: [],
                history: transactions,
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
        return outcome(fields, verified: verified)
    }

    private static func outcome(_ fields: [ExplainReport.Field], verified: Bool) -> Outcome {
        let json = ExplainJSON.object(fields.map { ($0.key, ExplainJSON.from($0.value)) })
            .setting("verified", .bool(verified))
        return Outcome(json: json, verified: verified)
    }

    /// The history pages read as the run reads them, their transactions together; the first refusal refuses all.
    private static func readHistory(
        _ pages: [[UInt8]],
        otid: String,
        verifier: SignedDataVerifier
    ) -> ServerAPIAnswer.HistoryReading {
        var transactions: [ReceiptTransaction] = []
        for page in pages {
            let response: HistoryResponse
            do {
                response = try HistoryResponse.decode(page)
            } catch {
                return .refused(VerdictReason(.malformedResponse, detail: "history: \(error.detail)"))
            }
            switch ServerAPIVerification.readHistoryPage(response, otid: otid, verifier: verifier) {
            case .found(let read): transactions += read.transactions
            case .refused(let reason): return .refused(reason)
            }
        }
        return .found(ServerAPIAnswer.HistoryPage(transactions: transactions, revision: nil, hasMore: false))
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
