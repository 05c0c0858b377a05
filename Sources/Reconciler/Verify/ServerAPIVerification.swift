import AppStoreClient
import AppStoreSignedData
import Foundation
import ReceiptDomain

/// One subscription through the App Store Server API: statuses, then (only when needed) the transaction
/// history page by page, then a decision. The item's `AttemptPlan` decides retries, their waits, the one
/// environment switch (4040010 on statuses) and the history's pages; the plan's next step and the decision are
/// made where each answer arrives, off the pipeline's queue (docs/architecture.md, "The App Store Server
/// API"). Confined to the pipeline's queue except `perform`.
final class ServerAPIVerification: SourceVerification, @unchecked Sendable {
    private enum Phase: Sendable {
        case statuses
        /// Reading history from `startDate` (nil: all of it); the plan holds the next page's `revision`.
        case history(startDate: Date?)
    }

    private let source: ServerAPISource
    private let item: WorkItem
    /// The original transaction id asked about (the row's, or its stored receipt's).
    private var originalTransactionId = ""
    private var plan: AttemptPlan
    /// The wall clock `Retry-After` is measured on (the pipeline's, from `start(_:)`).
    private var date: @Sendable () -> Date = { Date() }
    private var phase: Phase = .statuses
    private var status: ServerAPIAnswer.Status?
    private var history: [ReceiptTransaction] = []
    private var environment: AppleEnvironment { plan.environment }

    init(source: ServerAPISource, item: WorkItem) {
        self.source = source
        self.item = item
        self.plan = AttemptContext.standard.plan(maxAttempts: source.maxAttempts, startingIn: item.stored.environment)
    }

    func start(_ context: AttemptContext) -> SourceStep {
        (plan, date) = (
            context.plan(maxAttempts: source.maxAttempts, startingIn: item.stored.environment), context.date
        )
        return start()
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
        _ = plan.start()
        return .send(request())
    }

    func perform(_ request: SourceRequest, completion: @escaping @Sendable (SourceAnswer, ServerAPIAnswer) -> Void) {
        let environment = request.environment ?? .production
        let verifier = source.verifier(environment)
        let otid = originalTransactionId
        // What the decision and the plan need, as they stand when the request leaves (value types: the answer is
        // decided where it arrives, off the pipeline's queue).
        let (item, source, statusSoFar, historySoFar) = (self.item, self.source, self.status, self.history)
        let (plan, date) = (self.plan, self.date)
        let answered = { @Sendable (answer: ServerAPIAnswer) in
            completion(Self.pipelineAnswer(request, answer.attempt), answer.planned(plan, now: date()))
        }
        switch phase {
        case .statuses:
            source.client.subscriptionStatuses(of: otid, environment: environment) { result in
                var answer = ServerAPIAnswer(attempt: result.attempt, isStatuses: true)
                if let body = result.body {
                    switch Self.readStatuses(body, otid: otid, verifier: verifier) {
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
                }
                answered(answer)
            }
        case .history(let startDate):
            let query = TransactionHistoryQuery(subscriptionGroupIdentifier: status?.group, startDate: startDate)
            source.client.transactionHistory(
                of: otid,
                query: query,
                revision: plan.page,
                environment: environment
            ) { result in
                var answer = ServerAPIAnswer(attempt: result.attempt, isStatuses: false)
                if let body = result.body {
                    Self.readHistory(body, otid: otid, verifier: verifier, into: &answer)
                    if let page = answer.page, page.nextRevision == nil, let statusSoFar {
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
                answered(answer)
            }
        }
    }

    /// The pipeline's view of an answer: statistics, the rate budget (a 429's `Retry-After` pauses it), reachability.
    private static func pipelineAnswer(_ request: SourceRequest, _ attempt: ServerAPIAttemptResult) -> SourceAnswer {
        let classification = attempt.classification
        return SourceAnswer(
            request: request,
            httpStatus: attempt.httpStatus,
            appleStatus: attempt.errorCode,
            transportFailure: attempt.transportFailure?.description,
            tlsRefusal: attempt.transportFailure?.tlsRefusal,
            throttled: classification == .rateLimited || attempt.httpStatus == 503,
            pauseBudgetUntil: classification == .rateLimited ? attempt.retryAfter : nil
        )
    }

    func next(after answer: SourceAnswer, _ data: ServerAPIAnswer) -> SourceStep {
        guard let planned = data.planned else { return concluded(data) }
        plan = planned.plan
        switch planned.step {
        case .send(_, _, let switching):
            // The next history page, or the statuses again in the other environment.
            if !switching { history.append(contentsOf: data.page?.transactions ?? []) }
            return .send(request(switchesEnvironment: switching))
        case .retry(_, _, let wait, _):
            return .retry(request(), afterNanoseconds: wait)
        case .finished(.lastPage):
            guard case .statuses = phase, let status = data.status else {
                history.append(contentsOf: data.page?.transactions ?? [])
                return decide(data.decision)
            }
            self.status = status
            switch Self.historyNeeded(for: status, item: item) {
            case .none: return decide(data.decision)
            case .all: phase = .history(startDate: nil)
            case .since(let date): phase = .history(startDate: date)
            }
            _ = plan.start()
            return .send(request())
        case .finished(.switchRefused):
            return notFoundInBoth(data.attempt)
        case .finished(let end):
            let attempt = data.attempt
            let why = data.refusal.map { "\(Self.describe(attempt)): \($0)" } ?? Self.describe(attempt)
            let text = end.isExhausted ? "\(why) after \(end)" : "\(why); \(end)"
            return .finished(
                SourceResult(kind: .unresolved(text), environment: environment, appleStatus: attempt.errorCode)
            )
        }
    }

    /// The step for an answer the plan has no say in: a refusal, a subscription Apple does not name, a 401, a
    /// failure that is a verdict.
    private func concluded(_ data: ServerAPIAnswer) -> SourceStep {
        let attempt = data.attempt
        if attempt.classification == .success, let refusal = data.refusal { return reject(refusal, appleStatus: nil) }
        guard
            let reason = Self.refusal(
                of: attempt.classification,
                httpStatus: attempt.httpStatus,
                described: Self.describe(attempt),
                otid: originalTransactionId
            )
        else {
            let reason = Self.unauthorized
            source.logger.critical("\(reason). Stopping the run.")
            return .stopRun(
                SourceResult(kind: .unresolved(reason), environment: environment, appleStatus: attempt.errorCode),
                configurationError: reason
            )
        }
        return reject(reason, appleStatus: attempt.errorCode)
    }

    private func notFoundInBoth(_ attempt: ServerAPIAttemptResult) -> SourceStep {
        let reason = Self.refusal(
            of: .notFound,
            httpStatus: attempt.httpStatus,
            described: Self.describe(attempt),
            otid: originalTransactionId
        )
        return reject(reason ?? VerdictReason(.transactionNotFound), appleStatus: attempt.errorCode)
    }

    static let unauthorized =
        "App Store Server API answered 401 Unauthorized: the key id, issuer id, bundle id or private key is wrong"

    /// What a last answer that is no usable status means for the subscription (docs/decision-rules.md, "The App
    /// Store Server API"), for the run and for `explain` alike: nil for a 401, which stops the run as a
    /// configuration error. A 4040010 is last only once the other environment said it too.
    static func refusal(
        of classification: ServerAPIErrorClass,
        httpStatus: Int?,
        described: String,
        otid: String
    ) -> VerdictReason? {
        switch classification {
        case .success: return VerdictReason(.transactionNotFound, detail: "no status for \(otid)")
        case .notFound:
            return VerdictReason(
                .transactionNotFound,
                httpStatus: httpStatus,
                detail: "4040010 in production and sandbox for \(otid)"
            )
        case .unauthorized: return nil
        case .failed, .rateLimited, .retryable:
            return VerdictReason(.serverAPIError, httpStatus: httpStatus, detail: described)
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

    /// The step for the decision made where the last answer arrived (`decided`, off the pipeline's queue).
    private func decide(_ made: Decision?) -> SourceStep {
        guard let decision = made else {
            return .finished(
                SourceResult(
                    kind: .unresolved("internal: no decision for the last answer"),
                    environment: environment,
                    appleStatus: nil
                )
            )
        }
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
        readStatuses(
            Result { () throws(SignedDataError) in try StatusResponse.decode(body) },
            otid: otid,
            verifier: verifier
        )
    }

    /// `readStatuses` of a body the client has decoded (`ServerAPIClient.subscriptionStatuses`).
    static func readStatuses(
        _ decoded: Result<StatusResponse, SignedDataError>,
        otid: String,
        verifier: SignedDataVerifier
    ) -> ServerAPIAnswer.StatusReading {
        let response: StatusResponse
        switch decoded {
        case .success(let decoded): response = decoded
        case .failure(let error):
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
        _ decoded: Result<HistoryResponse, SignedDataError>,
        otid: String,
        verifier: SignedDataVerifier,
        into answer: inout ServerAPIAnswer
    ) {
        switch decoded.map({ readHistoryPage($0, otid: otid, verifier: verifier) }) {
        case .success(.found(let page)): answer.page = page
        case .success(.refused(let refusal)): answer.refusal = refusal
        case .failure(let error):
            answer.refusal = VerdictReason(.malformedResponse, httpStatus: 200, detail: "history: \(error.detail)")
        }
    }

    /// Reads one Get Transaction History page for `otid` (for the run and for `explain` alike): every JWS on it
    /// verified, whoever it is about (one forged entry refuses the page), every value of the subscription's
    /// transactions within bounds.
    static func readHistoryPage(
        _ response: HistoryResponse,
        otid: String,
        verifier: SignedDataVerifier
    ) -> ServerAPIAnswer.HistoryReading {
        var transactions: [ReceiptTransaction] = []
        for signed in response.signedTransactions {
            do {
                let payload = try verifier.verifyTransaction(signed)
                guard payload.originalTransactionId == otid else { continue }
                if let transaction = SignedDataMapping.transaction(payload, jws: signed) {
                    if let problem = ValueBounds.problem(in: transaction) {
                        return .refused(VerdictReason(.implausibleValue, detail: problem))
                    }
                    transactions.append(transaction)
                }
            } catch {
                return .refused(VerdictReason(.signedDataRefused, detail: error.description))
            }
        }
        return .found(
            ServerAPIAnswer.HistoryPage(
                transactions: transactions,
                revision: response.revision,
                hasMore: response.hasMore ?? false
            )
        )
    }

    static func describe(_ attempt: ServerAPIAttemptResult) -> String {
        if let failure = attempt.transportFailure { return "transport: \(failure)" }
        var text = "HTTP \(attempt.httpStatus ?? 0)"
        if let code = attempt.errorCode { text += ", errorCode \(code)" }
        return text
    }
}
