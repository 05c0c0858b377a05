import AppStoreClient
import Dispatch
import Foundation
import Logging
import ReceiptDomain

/// The concurrent, rate-limited heart of a run: pulls pending items from the store in pages, hands each
/// to an `AppleSource`, sends the source's requests under their rate budgets and the run's concurrency,
/// retries with jittered backoff, and hands results to the store in batches.
///
/// It knows nothing about verifyReceipt or any other Apple API: the source turns an item into requests
/// and answers into steps (docs/architecture.md, "The pipeline").
///
/// Guarantees: never more than `floor(rate)` requests of one budget in any one-second window
/// (`BudgetLimiter`, `SendWindow`); never more than `--concurrency` requests in flight; every item read is
/// written exactly once, or left pending when the run stops; a stopped run leaves unstarted items pending
/// for `--resume`.
///
/// Threading (Dispatch, no thread per request): every mutable field is confined to `queue` (serial); the
/// store's reads run only on `readQueue` and its writes only on `writeQueue` (both serial, each with its
/// own connection, so the next page is read while a batch commits); a source's requests complete on any
/// thread and hop back onto `queue`. Time comes from the injected `PipelineClock`.
public final class ReconciliationPipeline: @unchecked Sendable {
    /// Why a run stopped before finishing its items.
    public enum StopReason: Sendable, Equatable {
        /// Our configuration is wrong (systematic 21004: the shared secret; 21000; HTTP 4xx): stop, exit 78.
        case configuration(String)
        /// SIGINT/SIGTERM or a caller's request: the run is resumable.
        case interrupted(String)
        /// The database failed beyond the retry budget.
        case database(String)
        /// Apple could not be reached for a while (`OutageBreaker`): "Apple unreachable: HOST, last failure:
        /// ..."; unfinished items stay pending for `--resume`.
        case appleUnreachable(String)
        /// HTTPS to Apple was refused (`TLSRefusalGuard`): "TLS refused by HOST: REASON ..."; a configuration
        /// error (exit 78), unfinished items stay pending for `--resume` once it is fixed.
        case tlsRefused(String)

        /// Apple was never really asked (unreachable, or refused over TLS): an item that ended unresolved stays
        /// pending, row untouched, for `--resume`.
        var leavesUnresolvedPending: Bool {
            switch self {
            case .appleUnreachable, .tlsRefused: true
            case .configuration, .interrupted, .database: false
            }
        }
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

    /// Attempts to write one batch before the run stops as a database failure (the store itself also
    /// retries a lost connection), waiting 1 s, then 2 s between them.
    static let writeAttempts = 3

    private let store: any PipelineStore
    private let source: any AppleSource
    private let options: RunOptions
    private let clock: any PipelineClock
    private let logger: Logger
    private let progress: ProgressHandler?
    /// Asked before every send window opens: a run sends only while it holds its run lock (`RunLockWatch`).
    private let sendGate: (any SendGate)?

    let queue = DispatchQueue(label: "renewal-reconciler.pipeline")
    let readQueue = DispatchQueue(label: "renewal-reconciler.pipeline.read")
    let writeQueue = DispatchQueue(label: "renewal-reconciler.pipeline.write")

    // MARK: state confined to `queue`
    private var limiters: [RateBudget: BudgetLimiter] = [:]
    /// Sends admitted by the token bucket, waiting in arrival order for their budget's send window.
    private var heldSends: [RateBudget: [(ItemTask, SourceRequest)]] = [:]
    private var drainScheduled: Set<RateBudget> = []
    /// Requests for a budget paused by Apple's `Retry-After`: not in flight (they do not hold the run's
    /// concurrency from other budgets) until the pause ends.
    private var parked: [RateBudget: [(ItemTask, SourceRequest)]] = [:]
    /// What each item's attempt plan starts with: the run's backoff and attempt budget, the pipeline's clock.
    private let attempts: AttemptContext
    /// Items read and not started, in id order from `readyHead`; a started item's slot is emptied at once,
    /// so the queue never keeps a finished item (its receipt, Apple's answer) alive.
    private var ready: [ItemTask?] = []
    private var readyHead = 0
    private var cursor: Int64 = 0
    private var exhausted = false
    private var fetching = false
    private var writing = false
    /// Store calls (reads or writes) whose result has not come back to `queue` yet.
    private var storeCalls = 0
    /// Requests sent or waiting for their budget.
    private var inFlight = 0
    /// Items taken from the store and not yet written (or dropped on stop).
    private var active = 0
    private var pendingResults: [ItemResult] = []
    /// Items sleeping between retries.
    private var waitingForRetry: [ObjectIdentifier: ItemTask] = [:]
    private var result = Result()
    private var stopReason: StopReason?
    private var done = false
    private var completion: (@Sendable (Result) -> Void)?
    private var startedAt: UInt64 = 0
    private var lastNoticeAt: UInt64?
    /// Trips when Apple stays unreachable (docs/architecture.md, "Apple outages"); made in `start`.
    private var breaker: OutageBreaker
    private var tlsGuard = TLSRefusalGuard()
    /// This process's part of every budget (`setRateShare`); 1 for a one-process run.
    private var rateShare = 1.0

    private var pageSize: Int { min(1000, max(100, options.concurrency * 2)) }
    /// The most items in memory at once (read and not yet written: queued, in flight, parked by a budget's
    /// `Retry-After`, waiting for a retry or for their batch). A page is read only when it fits whole under
    /// this bound, so memory does not grow with the run (docs/architecture.md, "Threading model"). The page
    /// of headroom lets a paused budget park a few seconds of items without starving the other budgets.
    var maxActive: Int { options.concurrency * 3 + options.batchSize + pageSize }
    /// The smallest page worth a query: a nearly full pipeline waits for a batch to be written instead of
    /// reading a few rows at a time.
    private var minimumPage: Int { max(1, min(pageSize, options.batchSize)) }

    public init(
        store: any PipelineStore,
        source: any AppleSource,
        options: RunOptions,
        logger: Logger,
        clock: any PipelineClock = SystemPipelineClock(),
        sendGate: (any SendGate)? = nil,
        progress: ProgressHandler? = nil
    ) throws {
        self.store = store
        self.sendGate = sendGate
        self.source = source
        self.options = options
        self.clock = clock
        self.logger = logger
        self.progress = progress
        self.breaker = OutageBreaker(options: options, start: 0)
        // Refuse an unusable rate up front (the budgets themselves are made on first use).
        _ = try TokenBucket(rate: options.rate, burst: 1)
        let clockForDates = clock
        self.attempts = AttemptContext(policy: AttemptPolicy(options), date: { clockForDates.date() })
    }

    /// Processes every pending item of the run (or until stopped); blocks the calling thread until done.
    public func run() -> Result {
        let finished = DispatchSemaphore(value: 0)
        let box = ResultBox()
        start { result in
            box.result = result
            finished.signal()
        }
        finished.wait()
        return box.result ?? Result()
    }

    /// Starts processing; `completion` is called once, on the pipeline's queue, when the run is drained or
    /// stopped.
    public func start(completion: @escaping @Sendable (Result) -> Void) {
        queue.async {
            self.completion = completion
            self.startedAt = self.clock.now()
            self.breaker = OutageBreaker(options: self.options, start: self.startedAt)
            self.scheduleFlushTick()
            self.fetchMore()
            self.checkCompletion()
        }
    }

    /// Asks the run to stop: no new requests; requests in flight finish and are written; the rest stay
    /// pending for `--resume`. Callable from any thread (a signal handler's queue).
    public func requestStop(_ reason: StopReason) {
        queue.async { self.stop(reason) }
    }

    /// This process's part of every budget (docs/architecture.md, "Workers"): each of N workers on one run sends at
    /// most `rate / N` of each budget, so together they never exceed it in any second. Lowering it keeps the
    /// budgets' recent sends (a send window never opens early); callable from any thread.
    public func setRateShare(_ share: Double) {
        queue.async {
            let share = min(1, max(share, 0.0001))
            guard share != self.rateShare else { return }
            self.rateShare = share
            for (budget, var limiter) in self.limiters {
                limiter.setConfiguredRate(budget.rate * share)
                self.limiters[budget] = limiter
            }
        }
    }

    /// The current rate of a budget (lower than configured while Apple pushes back), for tests and logs.
    func currentRate(of budget: RateBudget) -> Double? {
        queue.sync { limiters[budget]?.rate }
    }

    /// Waits until no database read or write is in progress and the pipeline's queues are empty (for
    /// in-process tests on a virtual clock; work waiting for a timer does not count).
    func settle() {
        while true {
            queue.sync {}
            readQueue.sync {}
            writeQueue.sync {}
            if queue.sync(execute: { storeCalls == 0 }) {
                queue.sync {}
                return
            }
        }
    }

    // MARK: - Feeding

    private func fetchMore() {
        let room = maxActive - active
        guard !fetching, !exhausted, stopReason == nil, room >= minimumPage, queuedCount < options.concurrency * 2
        else { return }
        fetching = true
        storeCalls += 1
        let after = cursor
        let limit = min(pageSize, room)
        readQueue.async {
            let page = Swift.Result { try self.store.fetchPending(after: after, limit: limit) }
            self.queue.async {
                self.storeCalls -= 1
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
                        self.ready.append(
                            ItemTask(
                                item: item,
                                verification: self.source.verification(for: item)
                            )
                        )
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
        ready[readyHead] = nil
        readyHead += 1
        if readyHead == ready.count {
            ready.removeAll(keepingCapacity: true)
            readyHead = 0
        } else if readyHead > 1024 && readyHead * 2 > ready.count {
            ready.removeFirst(readyHead)
            readyHead = 0
        }
        return task
    }

    /// Starts items while there is room in flight.
    private func pump() {
        while stopReason == nil, inFlight < options.concurrency, let task = popReady() {
            perform(task.verification.start(attempts), for: task)
        }
        if queuedCount < options.concurrency { fetchMore() }
    }

    // MARK: - Steps and requests

    private func perform(_ step: SourceStep, for task: ItemTask) {
        switch step {
        case .send(let request):
            guard stopReason == nil else { return drop(task) }
            send(task, request)
        case .retry(let request, let wait):
            guard stopReason == nil else { return drop(task) }
            waitingForRetry[ObjectIdentifier(task)] = task
            clock.schedule(after: wait, on: queue) {
                // Gone when the run stopped meanwhile (the item was dropped then).
                guard self.waitingForRetry.removeValue(forKey: ObjectIdentifier(task)) != nil else { return }
                self.result.stats.retries += 1
                self.send(task, request)
            }
        case .finished(let finished):
            finish(task, finished)
        case .stopRun(let finished, let message):
            stop(.configuration(message))
            finish(task, finished)
        }
    }

    /// Reserves the request's slot in its budget, then lets it through the budget's send window.
    private func send(_ task: ItemTask, _ request: SourceRequest) {
        let budget = request.budget
        guard var limiter = limiter(for: budget) else {
            finish(
                task,
                SourceResult(kind: .unresolved("no usable rate for \(budget)"), environment: nil, appleStatus: nil)
            )
            stop(.configuration("the rate of \(budget) (\(budget.rate)) is not usable"))
            return
        }
        let now = clock.now()
        if limiter.pausedUntil > now {
            park(task, request, until: limiter.pausedUntil, now: now)
            return
        }
        inFlight += 1
        let delay = limiter.reserve(now: now)
        limiters[budget] = limiter
        if delay == 0 {
            hold(task, request)
        } else {
            clock.schedule(after: delay, on: queue) { self.hold(task, request) }
        }
    }

    /// Holds the request until its budget's pause ends (`until`, as seen at `now`: the same reading that found the
    /// budget paused, so a pause ending between two readings never makes the wait wrap around into centuries).
    private func park(_ task: ItemTask, _ request: SourceRequest, until: UInt64, now: UInt64) {
        let budget = request.budget
        let first = parked[budget, default: []].isEmpty
        parked[budget, default: []].append((task, request))
        guard first else { return }
        clock.schedule(after: until > now ? until - now : 0, on: queue) {
            let waiting = self.parked.removeValue(forKey: budget) ?? []
            for (task, request) in waiting {
                if self.stopReason == nil { self.send(task, request) } else { self.drop(task) }
            }
            self.pump()
        }
    }

    private func limiter(for budget: RateBudget) -> BudgetLimiter? {
        if let existing = limiters[budget] { return existing }
        guard var made = try? BudgetLimiter(budget: budget) else { return nil }
        if rateShare < 1 { made.setConfiguredRate(budget.rate * rateShare) }
        limiters[budget] = made
        return made
    }

    private func hold(_ task: ItemTask, _ request: SourceRequest) {
        guard stopReason == nil else {
            inFlight -= 1
            return drop(task)
        }
        heldSends[request.budget, default: []].append((task, request))
        drain(request.budget)
    }

    /// Lets held sends of `budget` go while its send window allows; one timer waits for the next opening.
    private func drain(_ budget: RateBudget) {
        while let (task, request) = heldSends[budget]?.first, var limiter = limiters[budget] {
            if let hold = sendGateHold() {
                // Stopped (the lock is lost: the held sends were dropped), or holding until the lock is confirmed.
                if let hold { scheduleDrain(budget, after: hold) }
                return
            }
            let now = clock.now()
            let wait = limiter.trySend(now: now)
            limiters[budget] = limiter
            if let wait {
                scheduleDrain(budget, after: wait)
                return
            }
            heldSends[budget]?.removeFirst()
            dispatch(task, request, sentAt: now)
        }
    }

    private func scheduleDrain(_ budget: RateBudget, after wait: UInt64) {
        guard !drainScheduled.contains(budget) else { return }
        drainScheduled.insert(budget)
        clock.schedule(after: wait, on: queue) {
            self.drainScheduled.remove(budget)
            self.drain(budget)
        }
    }

    /// Nil when the send gate lets the next send window open; `.some(nil)` when the run lost its lock (the run is
    /// stopped); `.some(delay)` when sends hold until the lock is confirmed again (docs/architecture.md, "The run
    /// lock"). Asked before the window, so a held request never takes a slot of the window it is not sent in.
    private func sendGateHold() -> UInt64?? {
        switch sendGate?.sendPermission() ?? .go {
        case .go: return nil
        case .wait: return .some(100_000_000)
        case .lost(let why):
            logger.error("\(why); stopping: requests in flight finish, unfinished items stay pending")
            stop(.interrupted(why))
            return .some(nil)
        }
    }

    /// The window admitted the request at `sentAt`: hand it to the source (unless the run stopped meanwhile:
    /// then it stays pending for `--resume`).
    private func dispatch(_ task: ItemTask, _ request: SourceRequest, sentAt: UInt64) {
        guard stopReason == nil else {
            inFlight -= 1
            return drop(task)
        }
        task.requests += 1
        if request.switchesEnvironment { result.stats.environmentSwitches += 1 }
        perform(request, by: task.verification, for: task, sentAt: sentAt)
    }

    /// The request through its item's verification (opened as its own type, so its answer comes back typed).
    private func perform<V: SourceVerification>(
        _ request: SourceRequest,
        by verification: V,
        for task: ItemTask,
        sentAt: UInt64
    ) {
        verification.perform(request) { answer, own in
            self.queue.async {
                self.handle(task, answer, sentAt: sentAt) { verification.next(after: answer, own) }
            }
        }
    }

    private func handle(_ task: ItemTask, _ answer: SourceAnswer, sentAt: UInt64, next: () -> SourceStep) {
        inFlight -= 1
        result.stats.record(answer)
        let now = clock.now()
        if let notice = answer.notice, lastNoticeAt.map({ now &- $0 > 3_600_000_000_000 }) ?? true {
            lastNoticeAt = now
            logger.warning("\(notice)")
        }
        noteReachability(answer, now: now)
        let budget = answer.request.budget
        if var limiter = limiters[budget] {
            // The answer is back: Apple counted the request by now, so its send window slot is released sooner.
            limiter.answered(sentAt: sentAt, now: now)
            let before = limiter.rate
            if let rate = limiter.record(throttled: answer.throttled, now: now), rate < before {
                logger.notice(
                    """
                    Apple is pushing back (HTTP \(answer.httpStatus ?? 0)) on \(budget): slowing to \
                    \(String(format: "%.1f", rate)) requests/s
                    """
                )
            }
            if let until = answer.pauseBudgetUntil {
                let wait = clock.nanoseconds(until: until)
                if wait > 0 {
                    limiter.pause(until: now &+ wait)
                    logger.notice("Apple asks to wait on \(budget): nothing sent there for \(wait / 1_000_000) ms")
                }
            }
            limiters[budget] = limiter
        }
        perform(next(), for: task)
        pump()
    }

    /// Feeds the TLS refusal guard and the outage breaker; stops the run when HTTPS to Apple is refused
    /// systematically or Apple has been unreachable for long enough (before the item's next step, so a
    /// retry it asks for is not sent and the item stays pending).
    private func noteReachability(_ answer: SourceAnswer, now: UInt64) {
        if tlsGuard.record(answer, host: source.host(of: answer.request)) {
            let message = tlsGuard.message
            logger.critical("\(message); stopping: requests in flight finish, unfinished items stay pending")
            stop(.tlsRefused(message))
            return
        }
        guard let reason = OutageBreaker.unreachableReason(answer) else {
            breaker.recordAnswer(now: now)
            return
        }
        let host = source.host(of: answer.request)
        guard breaker.recordUnreachable(host: host, reason: reason, now: now) else { return }
        let message = breaker.message(now: now)
        logger.error("\(message); stopping: requests in flight finish, unfinished items stay pending")
        stop(.appleUnreachable(message))
    }

    private func finish(_ task: ItemTask, _ finished: SourceResult) {
        // Once Apple is known unreachable (or refused over TLS), an item that ran out of attempts was never
        // really checked: it stays pending (row untouched) for `--resume` rather than ending unresolved.
        if stopReason?.leavesUnresolvedPending == true, case .unresolved = finished.kind { return drop(task) }
        pendingResults.append(
            ItemResult(
                item: task.item,
                kind: finished.kind,
                environment: finished.environment,
                appleStatus: finished.appleStatus,
                attempts: task.requests
            )
        )
        flush(force: false)
    }

    /// An item given up because the run is stopping: it stays pending in the database.
    private func drop(_ task: ItemTask) {
        active -= 1
        checkCompletion()
    }

    // MARK: - Writing

    /// Every item still held has its result waiting for the batch and the store has no more: the batch cannot
    /// grow, so it is written now rather than at the next flush tick (up to half a second at the end of every
    /// run, and of every round of a worker).
    private var nothingMoreToBatch: Bool {
        exhausted && !fetching && active == pendingResults.count
    }

    private func scheduleFlushTick() {
        clock.schedule(after: 500_000_000, on: queue) {
            guard !self.done else { return }
            self.flush(force: true)
            self.scheduleFlushTick()
        }
    }

    private func flush(force: Bool) {
        guard !writing, !pendingResults.isEmpty else {
            checkCompletion()
            return
        }
        guard force || pendingResults.count >= options.batchSize || stopReason != nil || nothingMoreToBatch else {
            return
        }
        let batch = Array(pendingResults.prefix(options.batchSize))
        pendingResults.removeFirst(batch.count)
        writing = true
        write(batch, attempt: 1)
    }

    private func write(_ batch: [ItemResult], attempt: Int) {
        storeCalls += 1
        // The requests made so far go with the batch, so a run killed after it still counts them.
        let stats = currentStats()
        writeQueue.async {
            let outcome = Swift.Result { try self.store.write(batch, stats: stats) }
            self.queue.async {
                self.storeCalls -= 1
                switch outcome {
                case .success(let written):
                    self.writing = false
                    self.active -= batch.count
                    self.recordWritten(batch, written)
                case .failure(let error as RunOwnershipLostError):
                    // Another process owns the run now: nothing of this batch was stored and nothing more may be.
                    self.writing = false
                    self.active -= batch.count + self.pendingResults.count
                    self.pendingResults.removeAll()
                    self.logger.error("\(error)")
                    self.stop(.interrupted("\(error)"))
                case .failure(let error) where attempt < Self.writeAttempts:
                    let wait = UInt64(1 << (attempt - 1)) * 1_000_000_000
                    self.logger.warning(
                        "writing a batch of \(batch.count) results failed (attempt \(attempt)): \(error); trying again"
                    )
                    self.clock.schedule(after: wait, on: self.queue) { self.write(batch, attempt: attempt + 1) }
                    return
                case .failure(let error):
                    self.writing = false
                    self.active -= batch.count
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

    private func recordWritten(_ batch: [ItemResult], _ written: BatchWriteResult) {
        // Only what this process wrote counts as its results (a worker's lost lease leaves the item to another).
        for item in batch where !written.notWritten.contains(item.item.subscriptionId) {
            result.written += 1
            result.outcomes[written.outcome(of: item), default: 0] += 1
        }
        if let failure = written.batchFailure {
            logger.warning(
                "a batch of \(batch.count) results could not be written at once (\(failure)); written item by item"
            )
        }
        if !written.refused.isEmpty {
            let examples = written.refused.sorted { $0.key < $1.key }.prefix(3)
                .map { "subscription \($0.key): \($0.value)" }.joined(separator: "; ")
            logger.warning(
                """
                \(written.refused.count) item(s) hold values the database cannot store; \
                recorded as rejected (\(examples))
                """
            )
        }
        progress?(result.written, result.outcomes[.unresolved, default: 0], currentStats())
    }

    private func currentStats() -> AppleRequestStats {
        var stats = result.stats
        stats.elapsedSeconds = Double(clock.now() &- startedAt) / 1e9
        stats.achievedRate = stats.elapsedSeconds > 0 ? Double(stats.requests) / stats.elapsedSeconds : 0
        return stats
    }

    // MARK: - Stopping and completion

    private func stop(_ reason: StopReason) {
        guard stopReason == nil else { return }
        stopReason = reason
        if case .configuration(let message) = reason {
            // Results not yet written may deserve another outcome now (the source decides).
            pendingResults = pendingResults.map { source.revise($0, afterConfigurationError: message) }
        }
        if reason.leavesUnresolvedPending {
            // Unresolved results not yet written stay pending instead (see `finish`).
            let before = pendingResults.count
            pendingResults.removeAll { if case .unresolved = $0.kind { true } else { false } }
            active -= before - pendingResults.count
        }
        // Items not started stay pending in the database.
        while popReady() != nil { active -= 1 }
        active -= waitingForRetry.count
        waitingForRetry.removeAll()
        active -= parked.values.reduce(0) { $0 + $1.count }
        parked.removeAll()
        // Requests waiting for their budget's window are not sent: those items stay pending too.
        let held = heldSends.values.reduce(0) { $0 + $1.count }
        inFlight -= held
        active -= held
        heldSends.removeAll()
        flush(force: true)
        checkCompletion()
    }

    private func checkCompletion() {
        guard !done, !fetching, !writing, pendingResults.isEmpty, inFlight == 0 else { return }
        let drained = (exhausted && active == 0 && queuedCount == 0) || (stopReason != nil && active == 0)
        guard drained else { return }
        done = true
        result.stats = currentStats()
        result.stopReason = stopReason
        completion?(result)
        completion = nil
    }
}

/// Carries the result out of `run()`'s completion (written once, read after the semaphore).
private final class ResultBox: @unchecked Sendable {
    var result: ReconciliationPipeline.Result?
}
