import AppStoreClient
import Dispatch
import Foundation
import Logging
import ReceiptDomain

/// The concurrent, rate-limited heart of a run: pulls pending items from the store in pages, verifies
/// each receipt with Apple under a token bucket and an in-flight cap, retries with jittered backoff,
/// decides with the pure engine, and hands results to the store in batches.
///
/// Threading (Dispatch, no thread per request): every mutable field is confined to `queue` (serial);
/// the store's reads are only called on `readQueue` and its writes on `writeQueue` (both serial, each
/// with its own connection, so a connection is used by one thread at a time); HTTP runs on the curl client's own queue and its completions on global queues, where the
/// response is parsed and decided before hopping back onto `queue`.
public final class ReconciliationPipeline: @unchecked Sendable {
    /// Why a run stopped before finishing its items.
    public enum StopReason: Sendable, Equatable {
        /// Our configuration is wrong (21004 answers turned systematic: the shared secret; 21000; HTTP 4xx):
        /// stop, exit 78.
        case configuration(String)
        /// SIGINT/SIGTERM or a caller's request: the run is resumable.
        case interrupted(String)
        /// The database failed beyond the retry budget.
        case database(String)
    }

    /// What happened, for the run's bookkeeping.
    public struct Result: Sendable {
        public var written = 0
        public var outcomes: [ItemOutcome: Int] = [:]
        public var stats = AppleRequestStats()
        public var stopReason: StopReason?
    }

    /// Called on a private queue after each written batch.
    public typealias ProgressHandler = @Sendable (_ written: Int, _ unresolved: Int, _ stats: AppleRequestStats) -> Void

    private let store: any PipelineStore
    private let client: VerifyReceiptClient
    private let options: RunOptions
    private let bundleId: String?
    private let fixedNow: Date?
    private let logger: Logger
    private let progress: ProgressHandler?

    private let queue = DispatchQueue(label: "renewal-reconciler.pipeline")
    /// Reads (pending pages) and writes (result batches) run on their own queues and connections, so
    /// the next page is fetched while a batch commits.
    private let readQueue = DispatchQueue(label: "renewal-reconciler.pipeline.read")
    private let writeQueue = DispatchQueue(label: "renewal-reconciler.pipeline.write")
    private let workQueue = DispatchQueue.global(qos: .userInitiated)
    private let finished = DispatchSemaphore(value: 0)

    // MARK: state confined to `queue`
    private var bucket: TokenBucket
    private var adaptive: AdaptiveRateController
    private var backoffTemplate: Backoff
    private var ready: [ItemTask] = []
    private var readyHead = 0
    private var cursor: Int64 = 0
    private var exhausted = false
    private var fetching = false
    private var writing = false
    /// Requests sent or waiting for their token.
    private var inFlight = 0
    /// Items taken from the store and not yet written (or dropped on stop).
    private var active = 0
    private var pendingResults: [ItemResult] = []
    /// Items sleeping between retries.
    private var waitingForRetry: [ObjectIdentifier: ItemTask] = [:]
    private var result = Result()
    /// Fed with the Apple status of every answer that finishes an item.
    private var secretMismatches = SharedSecretMismatchDetector()
    private var stopReason: StopReason?
    private var done = false
    private var startedAt = ContinuousClock.now
    private var lastSunsetLog: ContinuousClock.Instant?
    /// Monotonic ticks of the most recent requests actually handed to the HTTP client (at most
    /// `floor(rate)`), oldest first, and the sends held back by the one-second window.
    private var sentTimes: [UInt64] = []
    private var heldSends: [@Sendable () -> Void] = []
    private var heldSendsHead = 0
    private var drainScheduled = false
    private var flushTimer: DispatchSourceTimer?

    private var pageSize: Int { min(1000, max(100, options.concurrency * 2)) }
    private var maxActive: Int { options.concurrency * 3 + options.batchSize }

    public init(
        store: any PipelineStore, client: VerifyReceiptClient, options: RunOptions, bundleId: String?,
        fixedNow: Date?, logger: Logger, progress: ProgressHandler? = nil
    ) throws {
        self.store = store
        self.client = client
        self.options = options
        self.bundleId = bundleId
        self.fixedNow = fixedNow
        self.logger = logger
        self.progress = progress
        self.bucket = try TokenBucket(rate: options.rate, burst: 1)
        self.adaptive = try AdaptiveRateController(configuredRate: options.rate)
        self.backoffTemplate = try Backoff(
            base: .milliseconds(Int64(options.backoffBaseSeconds * 1000)),
            cap: .milliseconds(Int64(max(options.backoffCapSeconds, options.backoffBaseSeconds) * 1000)),
            // VerificationAttempt bounds the attempts; the backoff only spaces them.
            maxAttempts: options.maxAttempts + 2, jitter: .full,
            maxRetryAfter: .milliseconds(Int64(options.maxRetryAfterSeconds * 1000)))
    }

    /// Processes every pending item of the run (or until stopped); blocks the calling thread until done.
    public func run() -> Result {
        queue.async {
            self.startedAt = ContinuousClock.now
            let timer = DispatchSource.makeTimerSource(queue: self.queue)
            timer.schedule(deadline: .now() + .milliseconds(500), repeating: .milliseconds(500))
            timer.setEventHandler { [weak self] in self?.flush(force: true) }
            timer.resume()
            self.flushTimer = timer
            self.fetchMore()
        }
        finished.wait()
        return queue.sync { result }
    }

    /// Asks the run to stop: no new requests; requests in flight finish and are written; the rest stay
    /// pending for `--resume`. Callable from any thread (a signal handler's queue).
    public func requestStop(_ reason: StopReason) {
        queue.async { self.stop(reason) }
    }

    // MARK: - Feeding

    private func fetchMore() {
        guard !fetching, !exhausted, stopReason == nil, active < maxActive, queuedCount < options.concurrency * 2
        else { return }
        fetching = true
        let after = cursor
        let limit = pageSize
        readQueue.async {
            let page: Swift.Result<[WorkItem], any Error> = Swift.Result { try self.store.fetchPending(after: after, limit: limit) }
            self.queue.async {
                self.fetching = false
                switch page {
                case .failure(let error):
                    self.logger.error("reading pending items failed: \(error)")
                    self.stop(.database("reading pending items: \(error)"))
                case .success(let items):
                    // Stopped while this page was read: leave its items pending in the database.
                    guard self.stopReason == nil else { break }
                    if items.count < limit { self.exhausted = true }
                    if let last = items.last { self.cursor = last.subscriptionId }
                    for item in items {
                        self.active += 1
                        self.ready.append(ItemTask(item: item, maxAttempts: self.options.maxAttempts, backoff: self.backoffTemplate))
                    }
                    self.pump()
                    self.fetchMore()
                }
                self.checkCompletion()
            }
        }
    }

    private var queuedCount: Int { ready.count - readyHead }

    private func popReady() -> ItemTask? {
        guard readyHead < ready.count else { return nil }
        let task = ready[readyHead]
        readyHead += 1
        if readyHead > 1024 && readyHead * 2 > ready.count {
            ready.removeFirst(readyHead)
            readyHead = 0
        }
        return task
    }

    /// Starts items while there is room in flight.
    private func pump() {
        while stopReason == nil, inFlight < options.concurrency, let task = popReady() {
            if !task.item.rowExists {
                finish(task, kind: .rejected(VerdictReason(.subscriptionNotInReceipt, detail: "subscription row deleted after the run selected it"), invalidReceipt: false), environment: nil, appleStatus: nil)
                continue
            }
            if task.item.receipt.isEmpty {
                finish(task, kind: .rejected(VerdictReason(.receiptMalformedOrTemporary, detail: "stored latest_receipt is empty"), invalidReceipt: true), environment: nil, appleStatus: nil)
                continue
            }
            let step = task.plan.start()
            perform(step, for: task)
        }
        if queuedCount < options.concurrency { fetchMore() }
    }

    // MARK: - Requests

    private func perform(_ step: VerificationAttempt.Step, for task: ItemTask) {
        switch step {
        case .send(let environment):
            send(task, to: environment)
        case .retry(let environment, _, let earliest, let reason):
            let now = MonotonicClock.now()
            let earliestTick = earliest.map { date -> UInt64 in
                let seconds = max(0, date.timeIntervalSinceNow)
                return now + UInt64(seconds * 1_000_000_000)
            }
            switch task.backoff.nextDelay(now: now, earliest: earliestTick) {
            case .giveUp(let why):
                finish(task, kind: .unresolved("\(reason.code.rawValue): \(reason) (gave up: \(why))"),
                       environment: environment, appleStatus: reason.appleStatus)
            case .retry(let nanoseconds):
                waitingForRetry[ObjectIdentifier(task)] = task
                queue.asyncAfter(deadline: .now() + .nanoseconds(Int(min(nanoseconds, UInt64(Int.max))))) {
                    // Gone when the run stopped meanwhile (the item was dropped then).
                    guard self.waitingForRetry.removeValue(forKey: ObjectIdentifier(task)) != nil else { return }
                    self.result.stats.retries += 1
                    self.send(task, to: environment)
                }
            }
        case .finished(let final):
            complete(task, final)
        }
    }

    private func send(_ task: ItemTask, to environment: AppleEnvironment) {
        inFlight += 1
        let delay = bucket.reserve(now: MonotonicClock.now())
        let go: @Sendable () -> Void = {
            let item = task.item
            let now = self.fixedNow ?? Date()
            let bundle = self.bundleId
            self.client.send(receipt: item.receipt, to: environment) { attempt in
                // On a global queue: decide here, off the pipeline queue (parsing was done by the client).
                var decision: Decision?
                if case .ok(let response) = attempt.verdict {
                    decision = DecisionEngine.decide(stored: item.stored, response: response, now: now, bundleId: bundle)
                }
                let decided = decision
                self.queue.async { self.handle(task, attempt, decided) }
            }
        }
        if delay == 0 {
            sendWhenSpaced(go)
        } else {
            queue.asyncAfter(deadline: .now() + .nanoseconds(Int(min(delay, UInt64(Int.max))))) { self.sendWhenSpaced(go) }
        }
    }

    /// The bucket grants slots 1/rate apart, but timers on a busy queue can fire late and together.
    /// This gate is the hard guarantee: it remembers when the last `floor(rate)` requests were actually
    /// sent and lets a request go only if fewer than that many left in the past second, so no more than
    /// `--rate` requests leave in any one-second window, even right after a stall. Requests held back
    /// wait in arrival order for one timer (no timer per request).
    private func sendWhenSpaced(_ go: @escaping @Sendable () -> Void) {
        heldSends.append(go)
        drainHeldSends()
    }

    private func drainHeldSends() {
        let capacity = max(1, Int(bucket.rate.rounded(.down)))
        while heldSendsHead < heldSends.count {
            let now = MonotonicClock.now()
            if sentTimes.count > capacity { sentTimes.removeFirst(sentTimes.count - capacity) }
            // Two limits: at most `capacity` sends in the past second, and consecutive sends at least 0.9
            // of an interval apart (after a stall the run catches up only slightly faster than the rate,
            // never in a burst that the HTTP layer and the kernel could bunch further).
            var notBefore: UInt64 = 0
            if sentTimes.count == capacity, let oldest = sentTimes.first { notBefore = oldest &+ 1_000_000_000 }
            if let last = sentTimes.last { notBefore = max(notBefore, last &+ bucket.intervalNanoseconds / 10 * 9) }
            if now < notBefore {
                guard !drainScheduled else { return }
                drainScheduled = true
                let wait = notBefore &- now
                queue.asyncAfter(deadline: .now() + .nanoseconds(Int(min(wait, UInt64(Int.max))))) {
                    self.drainScheduled = false
                    self.drainHeldSends()
                }
                return
            }
            if sentTimes.count == capacity { sentTimes.removeFirst() }
            sentTimes.append(now)
            let go = heldSends[heldSendsHead]
            heldSendsHead += 1
            if heldSendsHead == heldSends.count {
                heldSends.removeAll(keepingCapacity: true)
                heldSendsHead = 0
            }
            go()
        }
    }

    private func handle(_ task: ItemTask, _ attempt: VerifyAttemptResult, _ decision: Decision?) {
        inFlight -= 1
        result.stats.record(attempt)
        task.lastAttempt = attempt
        if let sunset = attempt.sunset ?? attempt.deprecation {
            let now = ContinuousClock.now
            if lastSunsetLog.map({ now - $0 > .seconds(3600) }) ?? true {
                lastSunsetLog = now
                logger.warning("Apple announces the end of verifyReceipt (Sunset/Deprecation: \(sunset))")
            }
        }
        let throttled = attempt.httpStatus == 429 || attempt.httpStatus == 503
        let rate = adaptive.record(throttled ? .throttled : .success, now: MonotonicClock.now())
        if rate != bucket.rate {
            if rate < bucket.rate {
                logger.notice("Apple is pushing back (HTTP \(attempt.httpStatus ?? 0)): slowing to \(String(format: "%.1f", rate)) requests/s")
            }
            bucket.setRate(rate)
        }
        if case .switchEnvironment = attempt.verdict { result.stats.environmentSwitches += 1 }
        task.decision = decision
        let step = task.plan.next(after: attempt.verdict)
        if case .send = step, stopReason != nil {
            drop(task)
        } else {
            perform(step, for: task)
        }
        pump()
    }

    private func complete(_ task: ItemTask, _ final: VerificationAttempt.Final) {
        let last = task.lastAttempt
        let secretLooksWrong = last?.appleStatus.map(noteAppleStatus) ?? false
        switch final {
        case .ok(_, let environment):
            guard let decision = task.decision else {
                finish(task, kind: .unresolved("internal: no decision for an ok response"), environment: environment, appleStatus: last?.appleStatus)
                return
            }
            if decision.outcome == .rejected {
                let reason = decision.rejectReason ?? VerdictReason(.unknownStatus, detail: "rejected by the decision engine")
                finish(task, kind: .rejected(reason, invalidReceipt: false), environment: environment, appleStatus: last?.appleStatus)
            } else {
                finish(task, kind: .decided(decision), environment: decision.environment ?? environment, appleStatus: last?.appleStatus)
            }
        case .rejected(let reason) where reason.code == .internalDataAccessPermanent:
            // 21100-21199 marked not retryable: stop asking now, but it is Apple's internal error, not a verdict
            // on the receipt, so the item is unresolved (row untouched, due again next run), never `rejected`.
            finish(task, kind: .unresolved("\(reason.code.rawValue): \(reason) (not retried)"), environment: task.plan.environment, appleStatus: reason.appleStatus ?? last?.appleStatus)
        case .rejected(let reason) where reason.code == .sharedSecretMismatch && secretMismatches.isSystematic:
            // Not this receipt's problem: the secret is wrong for every receipt. Row untouched, due again.
            finish(
                task, kind: .unresolved(Self.secretLooksWrong(reason)), environment: task.plan.environment,
                appleStatus: reason.appleStatus ?? last?.appleStatus)
        case .rejected(let reason) where reason.code == .accountNotFound:
            // 21010: "treat as if a purchase was never made": the entitlement ends, written like any decision.
            let decision = DecisionEngine.accountNotFound(
                stored: task.item.stored, now: fixedNow ?? Date(), environment: task.plan.environment)
            finish(
                task, kind: .decided(decision), environment: decision.environment ?? task.plan.environment,
                appleStatus: reason.appleStatus ?? last?.appleStatus)
        case .rejected(let reason):
            finish(task, kind: .rejected(reason, invalidReceipt: reason.code == .invalidReceipt), environment: task.plan.environment, appleStatus: reason.appleStatus ?? last?.appleStatus)
        case .unresolved(let reason):
            finish(task, kind: .unresolved("\(reason.code.rawValue): \(reason) after \(task.plan.failures) attempts"), environment: task.plan.environment, appleStatus: reason.appleStatus ?? last?.appleStatus)
        case .configurationError(let reason):
            logger.critical("Apple reports a configuration error: \(reason). Stopping the run.")
            finish(task, kind: .unresolved("\(reason.code.rawValue): \(reason)"), environment: task.plan.environment, appleStatus: reason.appleStatus)
            stop(.configuration("\(reason.code.rawValue): \(reason)"))
        }
        if secretLooksWrong, let evidence = secretMismatches.evidence {
            stop(
                .configuration(
                    "the shared secret looks wrong: Apple answered 21004, shared secret does not match; \(evidence)"))
        }
    }

    /// Feeds the 21004 detector; returns true when this answer made the 21004s systematic. Then 21004
    /// rejections not yet written become unresolved (rows untouched: the receipts were never really checked)
    /// and the caller stops the run.
    private func noteAppleStatus(_ status: Int) -> Bool {
        guard !secretMismatches.isSystematic, secretMismatches.record(appleStatus: status) else { return false }
        let evidence = secretMismatches.evidence ?? ""
        logger.critical(
            """
            Apple answers 21004 (shared secret does not match) systematically (\(evidence)): \
            the shared secret looks wrong. Stopping the run.
            """)
        pendingResults = pendingResults.map { r in
            guard case .rejected(let reason, _) = r.kind, reason.code == .sharedSecretMismatch else { return r }
            return ItemResult(
                item: r.item, kind: .unresolved(Self.secretLooksWrong(reason)), environment: r.environment,
                appleStatus: r.appleStatus, attempts: r.attempts)
        }
        return true
    }

    /// The reason of a 21004 item once 21004s are systematic: not this receipt's fault.
    private static func secretLooksWrong(_ reason: VerdictReason) -> String {
        "\(reason.code.rawValue): \(reason) (the shared secret looks wrong; run stopped)"
    }

    private func finish(_ task: ItemTask, kind: ItemResult.Kind, environment: AppleEnvironment?, appleStatus: Int?) {
        pendingResults.append(
            ItemResult(item: task.item, kind: kind, environment: environment, appleStatus: appleStatus, attempts: task.plan.requests))
        flush(force: false)
    }

    /// An item given up because the run is stopping: it stays pending in the database.
    private func drop(_ task: ItemTask) {
        active -= 1
        checkCompletion()
    }

    // MARK: - Writing

    private func flush(force: Bool) {
        guard !writing, !pendingResults.isEmpty else {
            checkCompletion()
            return
        }
        guard force || pendingResults.count >= options.batchSize || stopReason != nil else { return }
        let batch = Array(pendingResults.prefix(options.batchSize))
        pendingResults.removeFirst(batch.count)
        writing = true
        writeQueue.async {
            let outcome: Swift.Result<BatchWriteResult, any Error> = Swift.Result { try self.store.write(batch) }
            self.queue.async {
                self.writing = false
                self.active -= batch.count
                switch outcome {
                case .success(let written):
                    self.result.written += batch.count
                    for item in batch {
                        self.result.outcomes[written.outcome(of: item), default: 0] += 1
                    }
                    if let failure = written.batchFailure {
                        self.logger.warning(
                            """
                            a batch of \(batch.count) results could not be written at once (\(failure)); \
                            written item by item
                            """)
                    }
                    if !written.refused.isEmpty {
                        let examples = written.refused.sorted { $0.key < $1.key }.prefix(3)
                            .map { "subscription \($0.key): \($0.value)" }.joined(separator: "; ")
                        self.logger.warning(
                            """
                            \(written.refused.count) item(s) hold values the database cannot store; \
                            recorded as rejected (\(examples))
                            """)
                    }
                    let unresolved = self.result.outcomes[.unresolved, default: 0]
                    let stats = self.currentStats()
                    self.progress?(self.result.written, unresolved, stats)
                case .failure(let error):
                    self.logger.error("writing a batch of \(batch.count) results failed: \(error)")
                    self.stop(.database("writing results: \(error)"))
                }
                self.pump()
                self.fetchMore()
                self.flush(force: false)
                self.checkCompletion()
            }
        }
    }

    private func currentStats() -> AppleRequestStats {
        var stats = result.stats
        let elapsed = ContinuousClock.now - startedAt
        stats.elapsedSeconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        stats.achievedRate = stats.elapsedSeconds > 0 ? Double(stats.requests) / stats.elapsedSeconds : 0
        return stats
    }

    // MARK: - Stopping and completion

    private func stop(_ reason: StopReason) {
        guard stopReason == nil else { return }
        stopReason = reason
        // Items not started stay pending in the database.
        while popReady() != nil { active -= 1 }
        active -= waitingForRetry.count
        waitingForRetry.removeAll()
        flush(force: true)
        checkCompletion()
    }

    private func checkCompletion() {
        guard !done, !fetching, !writing, pendingResults.isEmpty, inFlight == 0 else { return }
        let drained = (exhausted && active == 0 && queuedCount == 0) || (stopReason != nil && active == 0)
        guard drained else { return }
        done = true
        flushTimer?.cancel()
        flushTimer = nil
        result.stats = currentStats()
        result.stopReason = stopReason
        finished.signal()
    }
}

/// One item on its way through the pipeline. Confined to the pipeline's queue.
final class ItemTask: @unchecked Sendable {
    let item: WorkItem
    var plan: VerificationAttempt
    var backoff: Backoff
    var lastAttempt: VerifyAttemptResult?
    var decision: Decision?

    init(item: WorkItem, maxAttempts: Int, backoff: Backoff) {
        self.item = item
        self.plan = VerificationAttempt(maxAttempts: maxAttempts)
        self.backoff = backoff
    }
}
