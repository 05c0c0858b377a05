import CivilTime
import Foundation

/// The pure core of `renewal-reconciler explain`: what this tool concludes from one verifyReceipt
/// response, as a JSON object with a fixed key order.
///
/// The "stored row" is synthesised from the response itself (no previous state), so the report is
/// the verdict the engine would reach for a brand-new row.
public struct ExplainReport: Sendable, Equatable {
    /// The output keys, exactly and in this order.
    public static let keys: [String] = [
        "apple_status", "environment", "verdict", "retryable", "reason", "original_transaction_id", "state",
        "expires_at", "product_id", "latest_transaction_id", "auto_renew", "auto_renew_product_id",
        "expiration_intent", "grace_period_expires_at", "in_billing_retry", "is_trial", "is_intro_offer",
        "revoked_at", "cancellation_reason", "app_account_token", "app_transaction_id", "price_increase_status",
        "renewal_price_milliunits", "renewal_currency", "renewal_billing_plan_type",
    ]

    /// One output member.
    public struct Field: Sendable, Equatable {
        public let key: String
        public let value: JSONValue
    }

    /// The members in `keys` order.
    public let fields: [Field]
    /// The classification of the response's status.
    public let verdict: VerifyVerdict
    /// The engine's decision, when the status allowed one.
    public let decision: Decision?

    /// Explains a response body.
    /// - Parameters:
    ///   - body: the verifyReceipt response bytes.
    ///   - sourceName: the file name (or other label) used in errors.
    ///   - originalTransactionId: which subscription; optional when the receipt holds exactly one.
    ///   - bundleId: the configured bundle id (mismatch = reject), or nil to skip the check.
    ///   - now: the instant states are decided at.
    ///   - environment: the endpoint the response came from, if known (used when the body has none,
    ///     and to detect 21007/21008 loops).
    public static func build(
        body: some Collection<UInt8>,
        sourceName: String,
        originalTransactionId: String?,
        bundleId: String?,
        now: Date,
        environment: AppleEnvironment?
    ) throws(ExplainError) -> ExplainReport {
        let response: VerifyReceiptResponse
        do {
            response = try VerifyReceiptResponse.parse(body)
        } catch  where error.code == .implausibleValue {
            // A readable answer holding an impossible value: the same rejection the run records.
            let reason = VerdictReason(.implausibleValue, detail: error.description)
            let values: [String: JSONValue] = [
                "environment": environment.map { .string($0.rawValue) } ?? .null,
                "verdict": .string("reject"), "retryable": .bool(false), "reason": .string(reason.description),
                "original_transaction_id": originalTransactionId.map { .string($0) } ?? .null,
            ]
            return ExplainReport(
                fields: keys.map { Field(key: $0, value: values[$0] ?? .null) },
                verdict: .reject(reason),
                decision: nil
            )
        } catch {
            throw ExplainError(code: .unreadable, source: sourceName, problem: error.description, parseError: error)
        }
        return try build(
            response: response,
            sourceName: sourceName,
            originalTransactionId: originalTransactionId,
            bundleId: bundleId,
            now: now,
            environment: environment
        )
    }

    /// Explains an already parsed response (also one mapped from the App Store Server API's signed data,
    /// so the same rules decide the state).
    public static func build(
        response: VerifyReceiptResponse,
        sourceName: String,
        originalTransactionId: String?,
        bundleId: String?,
        now: Date,
        environment: AppleEnvironment?
    ) throws(ExplainError) -> ExplainReport {
        let verdict = VerifyClassifier.classify(response: response, requestedEnvironment: environment)
        var values: [String: JSONValue] = [
            "apple_status": .number(String(response.status)),
            "environment": (response.environment ?? environment).map { .string($0.rawValue) } ?? .null,
            "verdict": .string(verdict.name),
            "retryable": .bool(verdict.isRetry),
            "original_transaction_id": originalTransactionId.map { .string($0) } ?? .null,
        ]
        switch verdict {
        case .switchEnvironment(let target):
            let code: VerdictReason.Code =
                target == .sandbox ? .sandboxReceiptInProduction : .productionReceiptInSandbox
            values["reason"] = .string(VerdictReason(code, appleStatus: response.status).description)
        default:
            values["reason"] = verdict.reason.map { .string($0.description) } ?? .null
        }

        var decision: Decision?
        if case .reject(let reason) = verdict, reason.code == .accountNotFound {
            // 21010 ends the entitlement (docs/decision-rules.md): show the row it leaves.
            let stored = StoredSubscription(
                originalTransactionId: originalTransactionId ?? "",
                userId: "",
                productId: ""
            )
            let ended = DecisionEngine.accountNotFound(
                stored: stored,
                now: now,
                environment: response.environment ?? environment
            )
            decision = ended
            fill(&values, from: ended)
            values["product_id"] = .null
        }
        if case .ok = verdict {
            let otid = try chooseSubscription(response, requested: originalTransactionId, source: sourceName)
            values["original_transaction_id"] = .string(otid)
            let productId =
                response.subscriptionTransactions.first { $0.originalTransactionId == otid }?.productId ?? ""
            let stored = StoredSubscription(originalTransactionId: otid, userId: "", productId: productId)
            let decided = DecisionEngine.decide(stored: stored, response: response, now: now, bundleId: bundleId)
            decision = decided
            if decided.outcome == .rejected {
                values["verdict"] = .string("reject")
                values["reason"] = decided.rejectReason.map { .string($0.description) } ?? .null
            } else {
                fill(&values, from: decided)
            }
        }
        let fields = keys.map { Field(key: $0, value: values[$0] ?? .null) }
        return ExplainReport(fields: fields, verdict: verdict, decision: decision)
    }

    /// The members for a decision made from the App Store Server API's signed data (`ServerAPIDecision`, the
    /// run's own function): the same keys, `apple_status` null (that API has no verifyReceipt status), and
    /// `verdict` `ok`, or `reject` with the reason when the decision rejected the answer.
    public static func fields(
        of decision: Decision,
        originalTransactionId: String,
        environment: AppleEnvironment?
    ) -> [Field] {
        var values: [String: JSONValue] = [
            "environment": string(environment?.rawValue), "verdict": .string("ok"), "retryable": .bool(false),
            "original_transaction_id": .string(originalTransactionId),
        ]
        if decision.outcome == .rejected {
            values["verdict"] = .string("reject")
            values["reason"] = decision.rejectReason.map { .string($0.description) } ?? .null
        } else {
            fill(&values, from: decision)
        }
        return keys.map { Field(key: $0, value: values[$0] ?? .null) }
    }

    /// The members for an answer refused before any decision (signed data that did not verify, a value out of
    /// bounds): `verdict` `reject` with the reason, nothing else decided.
    public static func fields(
        rejecting reason: VerdictReason,
        originalTransactionId: String?,
        environment: AppleEnvironment?
    ) -> [Field] {
        let values: [String: JSONValue] = [
            "environment": string(environment?.rawValue), "verdict": .string("reject"), "retryable": .bool(false),
            "reason": .string(reason.description), "original_transaction_id": string(originalTransactionId),
        ]
        return keys.map { Field(key: $0, value: values[$0] ?? .null) }
    }

    private static func date(_ value: Date?) -> JSONValue { value.map { .string(RFC3339.string($0)) } ?? .null }
    private static func string(_ value: String?) -> JSONValue { value.map { .string($0) } ?? .null }
    private static func int(_ value: Int?) -> JSONValue { value.map { .number(String($0)) } ?? .null }

    private static func fill(_ values: inout [String: JSONValue], from decision: Decision) {
        values["state"] = string(decision.state?.rawValue)
        values["expires_at"] = date(decision.expiresAt)
        values["product_id"] = .string(decision.productId)
        values["latest_transaction_id"] = string(decision.latestTransactionId)
        values["auto_renew"] = decision.autoRenew.map { .bool($0) } ?? .null
        values["auto_renew_product_id"] = string(decision.autoRenewProductId)
        values["expiration_intent"] = int(decision.expirationIntent)
        values["grace_period_expires_at"] = date(decision.gracePeriodExpiresAt)
        values["in_billing_retry"] = .bool(decision.inBillingRetry)
        values["is_trial"] = .bool(decision.isTrial)
        values["is_intro_offer"] = .bool(decision.isIntroOffer)
        values["revoked_at"] = date(decision.revokedAt)
        values["cancellation_reason"] = int(decision.cancellationReason)
        values["app_account_token"] = string(decision.customer.appAccountToken)
        values["app_transaction_id"] = string(decision.customer.appTransactionId)
        values["price_increase_status"] = int(decision.customer.priceIncreaseStatus)
        values["renewal_price_milliunits"] =
            decision.customer.renewalPriceMilliunits.map { .number(String($0)) } ?? .null
        values["renewal_currency"] = string(decision.customer.renewalCurrency)
        values["renewal_billing_plan_type"] = string(decision.customer.renewalBillingPlanType)
        if decision.environment != nil { values["environment"] = string(decision.environment?.rawValue) }
    }

    /// The subscriptions (original_transaction_id, product of its latest-expiring transaction) in a response.
    public static func subscriptions(
        in response: VerifyReceiptResponse
    ) -> [(originalTransactionId: String, productId: String)] {
        var latest: [String: ReceiptTransaction] = [:]
        for transaction in response.subscriptionTransactions {
            guard let expires = transaction.expiresDate else { continue }
            if let current = latest[transaction.originalTransactionId], let currentExpires = current.expiresDate,
                currentExpires >= expires
            {
                continue
            }
            latest[transaction.originalTransactionId] = transaction
        }
        return latest.keys.sorted().map { ($0, latest[$0]?.productId ?? "") }
    }

    private static func chooseSubscription(
        _ response: VerifyReceiptResponse,
        requested: String?,
        source: String
    ) throws(ExplainError) -> String {
        if let requested { return requested }
        return try choose(
            among: subscriptions(in: response),
            source: source,
            none: "the receipt holds no auto-renewable subscription (no transaction with expires_date_ms)"
        )
    }

    /// The only subscription of an answer; none (`none` says why) or several (listed, for `--original-transaction-id`)
    /// is an error.
    public static func choose(
        among found: [(originalTransactionId: String, productId: String)],
        source: String,
        none: String
    ) throws(ExplainError) -> String {
        if found.count == 1, let only = found.first { return only.originalTransactionId }
        if found.isEmpty { throw ExplainError(code: .noSubscription, source: source, problem: none) }
        let listing = found.map { "\($0.originalTransactionId) (\($0.productId))" }.joined(separator: ", ")
        throw ExplainError(
            code: .ambiguousSubscription,
            source: source,
            problem: "the answer holds \(found.count) subscriptions, name one by original_transaction_id: \(listing)",
            candidates: found
        )
    }

    /// The report as a JSON object, keys in `keys` order, one member per line (pretty) or compact.
    public func jsonString(pretty: Bool = true) -> String {
        var output = "{"
        for (offset, field) in fields.enumerated() {
            if offset > 0 { output += "," }
            if pretty { output += "\n  " }
            JSONValue.writeString(field.key, to: &output)
            output += pretty ? ": " : ":"
            field.value.write(to: &output)
        }
        output += pretty ? "\n}\n" : "}"
        return output
    }
}
