import AppStoreClient
import AppStoreSignedData
import Foundation
import ReceiptDomain

/// One subscription through the App Store Server API: statuses, then (only when needed) the transaction
/// history page by page, then a decision. Confined to the pipeline's queue except `perform`, which verifies
/// the signed data where the answer arrives (docs/architecture.md, "The App Store Server API").
final class ServerAPIVerification: SourceVerification, @unchecked Sendable {
    private enum Phase: Sendable {
        case statuses
        /// Reading history from `startDate` (nil: all of it); `revision` is the next page's token.
        case history(startDate: Date?, revision: String?)
    }

    private let source: ServerAPISource
    private let item: WorkItem
    /// The original transaction id asked about (the row's, or its stored receipt's).
    private var originalTransactionId = ""
    private var environment: AppleEnvironment
    private var switched = false
    private var phase: Phase = .statuses
    private var failures = 0
    private var status: ServerAPIAnswer.Status?
    private var history: [ReceiptTransaction] = []
    private var historyRead = false

    init(source: ServerAPISource, item: WorkItem) {
        self.source = source
        self.item = item
        self.environment = item.stored.environment ?? .production
    }

    func start() -> SourceStep {
        if !item.rowExists {
            return reject(
                VerdictReason(.subscriptionNotInReceipt, detail: "subscription row deleted after the run selected it")
            )
        }
        guard let otid = Self.originalTransactionId(of: item) else {
            return reject(
                VerdictReason(
                    .noOriginalTransactionId,
                    detail:
                        "the row's original_transaction_id is not a transaction id and its stored receipt names none"
                )
            )
        }
        originalTransactionId = otid
        return .send(request())
    }

    func perform(_ request: SourceRequest, completion: @escaping @Sendable (SourceAnswer, ServerAPIAnswer) -> Void) {
        let environment = request.environment ?? .production
        let verifier = source.verifier(environment)
        let otid = originalTransactionId
        // What the decision needs, as it stands when the request leaves (value types: the answer is decided where it
        // arrives, off the pipeline's queue).
        let (item, source, statusSoFar, historySoFar) = (self.item, self.source, self.status, self.history)
        let path: String
        var query: [(String, String)] = []
        let isStatuses: Bool
        switch phase {
        case .statuses:
            isStatuses = true
            path = "/inApps/v1/subscriptions/" + otid
        case .history(let startDate, let revision):
            isStatuses = false
            path = "/inApps/v2/history/" + otid
            query.append(("sort", "ASCENDING"))
            query.append(("productType", "AUTO_RENEWABLE"))
            if let group = status?.group { query.append(("subscriptionGroupIdentifier", group)) }
            if let startDate { query.append(("startDate", String(Int64(startDate.timeIntervalSince1970 * 1000)))) }
            if let revision { query.append(("revision", revision)) }
        }
        source.client.get(path, query: query, environment: environment) { attempt in
            var answer = ServerAPIAnswer(attempt: attempt)
            if attempt.classification == .success {
                if isStatuses {
                    switch Self.readStatuses(attempt.body, otid: otid, verifier: verifier) {
                    case .found(let status):
                        answer.status = status
                        if case .none = Self.historyNeeded(for: status, item: item) {
                            answer.decision = Self.decided(
                                item,
                                otid: otid,
                                status: status,
                                history: nil,
                                environment: environment,
                                source: source
                            )
                        }
                    case .refused(let reason): answer.refusal = reason
                    case .absent: break
                    }
                } else {
                    Self.readHistory(attempt.body, otid: otid, verifier: verifier, into: &answer)
                    if let page = answer.page, !(page.hasMore && page.revision != nil), let statusSoFar {
                        answer.decision = Self.decided(
                            item,
                            otid: otid,
                            status: statusSoFar,
                            history: historySoFar + page.transactions,
                            environment: environment,
                            source: source
                        )
                    }
                }
            }
            let classification = attempt.classification
            completion(
                SourceAnswer(
                    request: request,
                    httpStatus: attempt.httpStatus,
                    appleStatus: attempt.errorCode,
                    transportFailure: attempt.transportFailure?.description,
                    tlsRefusal: attempt.transportFailure?.tlsRefusal,
                    throttled: classification == .rateLimited || attempt.httpStatus == 503,
                    pauseBudgetUntil: classification == .rateLimited ? attempt.retryAfter : nil
                ),
                answer
            )
        }
    }

    func next(after answer: SourceAnswer, _ data: ServerAPIAnswer) -> SourceStep {
        let attempt = data.attempt
        var classification = attempt.classification
        if classification == .success, data.refusal?.code == .malformedResponse {
            // A 200 whose body is not Apple's shape (cut short, not JSON) says nothing about the subscription:
            // ask again, as for a transport failure. A signature that does not verify is a verdict.
            classification = .retryable
        }
        switch classification {
        case .success:
            failures = 0
            if let refusal = data.refusal { return reject(refusal, appleStatus: nil) }
            switch phase {
            case .statuses:
                guard let status = data.status else {
                    return reject(VerdictReason(.transactionNotFound, detail: "no status for \(originalTransactionId)"))
                }
                self.status = status
                switch Self.historyNeeded(for: status, item: item) {
                case .none: return decide(data.decision)
                case .all: phase = .history(startDate: nil, revision: nil)
                case .since(let date): phase = .history(startDate: date, revision: nil)
                }
                return .send(request())
            case .history(let startDate, _):
                historyRead = true
                history.append(contentsOf: data.page?.transactions ?? [])
                if let page = data.page, page.hasMore, let revision = page.revision {
                    phase = .history(startDate: startDate, revision: revision)
                    return .send(request())
                }
                return decide(data.decision)
            }
        case .notFound:
            if case .statuses = phase, !switched {
                switched = true
                environment = environment.other
                return .send(request(switchesEnvironment: true))
            }
            return reject(
                VerdictReason(
                    .transactionNotFound,
                    httpStatus: attempt.httpStatus,
                    detail: "4040010 in production and sandbox for \(originalTransactionId)"
                ),
                appleStatus: attempt.errorCode
            )
        case .unauthorized:
            let reason =
                "App Store Server API answered 401 Unauthorized: the key id, issuer id, bundle id or private key is wrong"
            source.logger.critical("\(reason). Stopping the run.")
            return .stopRun(
                SourceResult(kind: .unresolved(reason), environment: environment, appleStatus: attempt.errorCode),
                configurationError: reason
            )
        case .rateLimited, .retryable:
            failures += 1
            let why = data.refusal.map { "\(Self.describe(attempt)): \($0)" } ?? Self.describe(attempt)
            if failures >= source.maxAttempts {
                return .finished(
                    SourceResult(
                        kind: .unresolved("\(why) after \(failures) attempts"),
                        environment: environment,
                        appleStatus: attempt.errorCode
                    )
                )
            }
            return .retry(request(), earliest: attempt.retryAfter, reason: why, appleStatus: attempt.errorCode)
        case .failed:
            return reject(
                VerdictReason(.serverAPIError, httpStatus: attempt.httpStatus, detail: Self.describe(attempt)),
                appleStatus: attempt.errorCode
            )
        }
    }

    // MARK: - Steps

    private func request(switchesEnvironment: Bool = false) -> SourceRequest {
        let budget: RateBudget
        switch phase {
        case .statuses: budget = source.budgets.statuses(environment)
        case .history: budget = source.budgets.history(environment)
        }
        return SourceRequest(budget: budget, environment: environment, switchesEnvironment: switchesEnvironment)
    }

    /// How much history to read: none when the ledger already holds what the status shows; all of it the first
    /// time (or when a notification may have changed an old transaction); else from the newest purchase
    /// already read, when the latest transaction is new or changed.
    private enum HistoryNeed {
        case none, all
        case since(Date)
    }

    private static func historyNeeded(for status: ServerAPIAnswer.Status, item: WorkItem) -> HistoryNeed {
        guard let through = item.historyThrough, item.dueReason != .notification else { return .all }
        let latest = status.transaction
        if let known = item.ledger.first(where: { $0.transactionId == latest.transactionId }),
            Self.ledgerHolds(known, as: latest)
        {
            return .none
        }
        return .since(through)
    }

    /// True when the stored ledger copy `known` already says what Apple's `signed` transaction says (priced,
    /// same expiry, refund and upgrade): nothing to read or write for it.
    static func ledgerHolds(_ known: ReceiptTransaction, as signed: ReceiptTransaction) -> Bool {
        (known.signedFacts != nil || signed.signedFacts == nil)
            && DecisionEngine.sameInstant(known.cancellationDate, signed.cancellationDate)
            && DecisionEngine.sameInstant(known.expiresDate, signed.expiresDate)
            && known.isUpgraded == signed.isUpgraded
            && known.signedFacts?.revocationPercentage == signed.signedFacts?.revocationPercentage
    }

    /// The step for the decision made where the answer arrived (`decided`, off the pipeline's queue).
    private func decide(_ made: Decision?) -> SourceStep {
        guard let status else {
            return reject(VerdictReason(.transactionNotFound, detail: "no status for \(originalTransactionId)"))
        }
        let decision =
            made
            ?? Self.decided(
                item,
                otid: originalTransactionId,
                status: status,
                history: historyRead ? history : nil,
                environment: environment,
                source: source
            )
        if decision.outcome == .rejected {
            return reject(
                decision.rejectReason ?? VerdictReason(.unknownStatus, detail: "rejected by the decision engine")
            )
        }
        return .finished(SourceResult(kind: .decided(decision), environment: environment, appleStatus: nil))
    }

    /// The decision on the answers so far (`ServerAPIDecision`, docs/decision-rules.md), with what the run writes
    /// of it: the history read through its newest purchase (when `history` was read), and only the ledger rows
    /// that are new or changed.
    static func decided(
        _ item: WorkItem,
        otid: String,
        status: ServerAPIAnswer.Status,
        history: [ReceiptTransaction]?,
        environment: AppleEnvironment,
        source: ServerAPISource
    ) -> Decision {
        var decision = ServerAPIDecision.decide(
            stored: item.stored,
            originalTransactionId: otid,
            ledger: item.ledger,
            history: history ?? [],
            status: status,
            environment: environment,
            bundleId: source.bundleId,
            now: source.now()
        )
        guard decision.outcome != .rejected else { return decision }
        if let history {
            let newest = history.compactMap(\.purchaseDate).max()
            decision.historyThrough = [newest, item.historyThrough].compactMap { $0 }.max()
        }
        // Only what is new or changed goes back to the ledger.
        let known = Dictionary(item.ledger.map { ($0.transactionId, $0) }, uniquingKeysWith: { a, _ in a })
        var answered = Dictionary((history ?? []).map { ($0.transactionId, $0) }, uniquingKeysWith: { _, b in b })
        answered[status.transaction.transactionId] = status.transaction
        decision.ledger = decision.ledger.filter { entry in
            guard let old = known[entry.transactionId] else { return true }
            guard let now = answered[entry.transactionId] else { return false }
            return !Self.ledgerHolds(old, as: now)
        }
        return decision
    }

    private func reject(_ reason: VerdictReason, appleStatus: Int? = nil) -> SourceStep {
        .finished(
            SourceResult(
                kind: .rejected(reason, invalidReceipt: false),
                environment: environment,
                appleStatus: appleStatus
            )
        )
    }

    // MARK: - Reading answers (off the pipeline's queue)

    /// The row's original transaction id when it is one (digits), else the one its stored receipt names.
    static func originalTransactionId(of item: WorkItem) -> String? {
        let otid = item.stored.originalTransactionId
        if !otid.isEmpty, otid.count <= 19, otid.allSatisfy({ $0.isASCII && $0.isNumber }) { return otid }
        guard let receipt = try? StoredReceipt.parse(base64: item.receipt) else { return nil }
        return receipt.inApp.filter { $0.expiresDate != nil }
            .max { ($0.purchaseDate ?? .distantPast) < ($1.purchaseDate ?? .distantPast) }?
            .originalTransactionId
    }

    /// Reads a Get All Subscription Statuses body for `otid`: every JWS of the subscription verified, the
    /// envelope's environment checked against the one asked (the verifier's), every value within bounds.
    static func readStatuses(
        _ body: [UInt8],
        otid: String,
        verifier: SignedDataVerifier
    ) -> ServerAPIAnswer.StatusReading {
        let response: StatusResponse
        do {
            response = try StatusResponse.decode(body)
        } catch {
            return .refused(VerdictReason(.malformedResponse, httpStatus: 200, detail: "statuses: \(error.detail)"))
        }
        // The envelope's environment must be the one asked, as every signed payload's must (the verifier checks
        // those): an answer that says one thing outside its signatures and another inside is not believed.
        if let envelope = response.environment, let asked = verifier.options.environment,
            AppStoreEnvironment(appleValue: envelope) != asked
        {
            return .refused(
                VerdictReason(
                    .signedDataRefused,
                    detail:
                        "environment_mismatch: the answer says \(envelope.prefix(40)), its data must be \(asked.rawValue)"
                )
            )
        }
        for group in response.data {
            for last in group.lastTransactions where last.originalTransactionId == otid {
                guard let signed = last.signedTransactionInfo else { continue }
                return verifiedStatus(last, signed: signed, group: group.subscriptionGroupIdentifier, verifier)
            }
        }
        return .absent
    }

    private static func verifiedStatus(
        _ last: LastTransactionsItem,
        signed: String,
        group: String?,
        _ verifier: SignedDataVerifier
    ) -> ServerAPIAnswer.StatusReading {
        do {
            let payload = try verifier.verifyTransaction(signed)
            guard let transaction = SignedDataMapping.transaction(payload, jws: signed) else {
                return .refused(
                    VerdictReason(.malformedResponse, httpStatus: 200, detail: "signed transaction without ids")
                )
            }
            var renewal: PendingRenewalInfo?
            if let signedRenewal = last.signedRenewalInfo {
                renewal = SignedDataMapping.renewal(try verifier.verifyRenewalInfo(signedRenewal))
            }
            if let problem = ValueBounds.problem(in: transaction) ?? renewal.flatMap(ValueBounds.problem(in:)) {
                return .refused(VerdictReason(.implausibleValue, detail: problem))
            }
            return .found(
                ServerAPIAnswer.Status(
                    status: last.status,
                    group: group ?? transaction.subscriptionGroupIdentifier,
                    transaction: transaction,
                    signedTransaction: signed,
                    renewal: renewal,
                    signedRenewal: last.signedRenewalInfo
                )
            )
        } catch {
            return .refused(VerdictReason(.signedDataRefused, detail: error.description))
        }
    }

    static func readHistory(
        _ body: [UInt8],
        otid: String,
        verifier: SignedDataVerifier,
        into answer: inout ServerAPIAnswer
    ) {
        let response: HistoryResponse
        do {
            response = try HistoryResponse.decode(body)
        } catch {
            answer.refusal = VerdictReason(.malformedResponse, httpStatus: 200, detail: "history: \(error.detail)")
            return
        }
        var transactions: [ReceiptTransaction] = []
        for signed in response.signedTransactions {
            // Every JWS of the page is verified, whoever it is about: one forged entry refuses the page.
            do {
                let payload = try verifier.verifyTransaction(signed)
                guard payload.originalTransactionId == otid else { continue }
                if let transaction = SignedDataMapping.transaction(payload, jws: signed) {
                    if let problem = ValueBounds.problem(in: transaction) {
                        answer.refusal = VerdictReason(.implausibleValue, detail: problem)
                        return
                    }
                    transactions.append(transaction)
                }
            } catch {
                answer.refusal = VerdictReason(.signedDataRefused, detail: error.description)
                return
            }
        }
        answer.page = ServerAPIAnswer.HistoryPage(
            transactions: transactions,
            revision: response.revision,
            hasMore: response.hasMore ?? false
        )
    }

    static func describe(_ attempt: ServerAPIAttemptResult) -> String {
        if let failure = attempt.transportFailure { return "transport: \(failure)" }
        var text = "HTTP \(attempt.httpStatus ?? 0)"
        if let code = attempt.errorCode { text += ", errorCode \(code)" }
        return text
    }
}
