import AppStoreClient
import Dispatch
import Foundation
import ReceiptDomain

@testable import Reconciler

/// An `AppleSource` for in-process pipeline tests: every request "takes" `latency` virtual nanoseconds, and
/// `script` says what Apple answers for (item, attempt, budget, send tick). It records every send (tick,
/// budget, item) and the most requests in flight at once.
final class FakeSource: AppleSource, @unchecked Sendable {
    /// What the fake Apple answers.
    enum Answer: Sendable {
        /// Decided: the item is done (`.decided` with an unchanged decision).
        case ok
        /// Retry later, not before `retryAfter` seconds when given (also pausing the budget when `pause`).
        case retry(throttled: Bool, retryAfter: Double?, pause: Bool)
        /// The run's configuration is wrong.
        case configurationError
        /// No answer: a transport failure (Apple unreachable); retried like `.retry`.
        case unreachable
    }

    struct Send: Sendable {
        let tick: UInt64
        let budget: RateBudget
        let subscriptionId: Int64
    }

    let clock: VirtualClock
    let budgets: [RateBudget]
    let latency: UInt64
    let maxAttempts: Int
    let script: @Sendable (_ subscriptionId: Int64, _ attempt: Int, _ budget: RateBudget, _ tick: UInt64) -> Answer
    private let answerQueue = DispatchQueue(label: "fake-apple")
    private let lock = NSLock()
    private var sendsValue: [Send] = []
    private var outstanding = 0
    private var peakOutstandingValue = 0
    private var liveVerificationsValue = 0
    private var peakLiveVerificationsValue = 0

    init(
        clock: VirtualClock,
        budgets: [RateBudget],
        latency: UInt64 = 50_000_000,
        maxAttempts: Int = 5,
        script: @escaping @Sendable (Int64, Int, RateBudget, UInt64) -> Answer = { _, _, _, _ in .ok }
    ) {
        self.clock = clock
        self.budgets = budgets
        self.latency = latency
        self.maxAttempts = maxAttempts
        self.script = script
    }

    var sends: [Send] { lock.withLock { sendsValue } }
    var peakOutstanding: Int { lock.withLock { peakOutstandingValue } }
    /// Verifications (one per item) not yet deallocated: what the pipeline still holds of its items.
    var liveVerifications: Int { lock.withLock { liveVerificationsValue } }
    var peakLiveVerifications: Int { lock.withLock { peakLiveVerificationsValue } }

    fileprivate func verificationMade() {
        lock.withLock {
            liveVerificationsValue += 1
            peakLiveVerificationsValue = max(peakLiveVerificationsValue, liveVerificationsValue)
        }
    }

    fileprivate func verificationGone() {
        lock.withLock { liveVerificationsValue -= 1 }
    }

    func verification(for item: WorkItem) -> any SourceVerification {
        FakeVerification(source: self, item: item)
    }

    func revise(_ result: ItemResult, afterConfigurationError reason: String) -> ItemResult {
        guard case .rejected = result.kind else { return result }
        return ItemResult(
            item: result.item,
            kind: .unresolved("revised: \(reason)"),
            environment: result.environment,
            appleStatus: result.appleStatus,
            attempts: result.attempts
        )
    }

    fileprivate func perform(
        _ item: WorkItem,
        attempt: Int,
        _ request: SourceRequest,
        completion: @escaping @Sendable (SourceAnswer, FakeAnswer) -> Void
    ) {
        let tick = clock.now()
        lock.withLock {
            sendsValue.append(Send(tick: tick, budget: request.budget, subscriptionId: item.subscriptionId))
            outstanding += 1
            peakOutstandingValue = max(peakOutstandingValue, outstanding)
        }
        let answer = script(item.subscriptionId, attempt, request.budget, tick)
        clock.schedule(after: latency, on: answerQueue) {
            self.lock.withLock { self.outstanding -= 1 }
            var throttled = false
            var pause: Date?
            if case .retry(let isThrottled, let retryAfter, let pauses) = answer {
                throttled = isThrottled
                if pauses, let retryAfter { pause = self.clock.date().addingTimeInterval(retryAfter) }
            }
            let unreachable: Bool = if case .unreachable = answer { true } else { false }
            completion(
                SourceAnswer(
                    request: request,
                    httpStatus: unreachable ? nil : throttled ? 429 : 200,
                    appleStatus: nil,
                    transportFailure: unreachable ? "couldn't connect to server (7)" : nil,
                    throttled: throttled,
                    pauseBudgetUntil: pause
                ),
                FakeAnswer(answer: answer)
            )
        }
    }
}

struct FakeAnswer: Sendable {
    let answer: FakeSource.Answer
}

/// One item: its requests go to the source's budgets in turn; `.ok` finishes it.
private final class FakeVerification: SourceVerification, @unchecked Sendable {
    let source: FakeSource
    let item: WorkItem
    var attempt = 0
    /// Retries and their waits, as the real sources decide them (the run's policy from `start(_:)`).
    var plan: AttemptPlan
    var date: @Sendable () -> Date

    init(source: FakeSource, item: WorkItem) {
        self.source = source
        self.item = item
        self.plan = AttemptPlan(policy: AttemptPolicy(maxAttempts: source.maxAttempts))
        let clock = source.clock
        self.date = { clock.date() }
        source.verificationMade()
    }

    deinit {
        source.verificationGone()
    }

    var request: SourceRequest {
        SourceRequest(budget: source.budgets[Int(item.subscriptionId) % source.budgets.count], environment: .production)
    }

    func start(_ context: AttemptContext) -> SourceStep {
        plan = context.plan(maxAttempts: source.maxAttempts, startingIn: .production)
        date = context.date
        return start()
    }

    func start() -> SourceStep {
        _ = plan.start()
        return .send(request)
    }

    /// The plan's step after a retryable answer.
    private func retried(notBefore: Date?) -> SourceStep {
        switch plan.next(after: .retryable(notBefore: notBefore), now: date()) {
        case .retry(_, _, let wait, _): return .retry(request, afterNanoseconds: wait)
        case .send: return .send(request)
        case .finished(let end):
            return .finished(
                SourceResult(kind: .unresolved("gave up: \(end)"), environment: .production, appleStatus: 0)
            )
        }
    }

    func perform(_ request: SourceRequest, completion: @escaping @Sendable (SourceAnswer, FakeAnswer) -> Void) {
        attempt += 1
        source.perform(item, attempt: attempt, request, completion: completion)
    }

    func next(after answer: SourceAnswer, _ own: FakeAnswer) -> SourceStep {
        let result = { (kind: ItemResult.Kind) in SourceResult(kind: kind, environment: .production, appleStatus: 0) }
        switch own.answer {
        case .ok:
            return .finished(
                result(
                    .decided(
                        TestDecisions.decision(
                            item,
                            expiresAt: Date(timeIntervalSince1970: 1_800_000_000),
                            outcome: .unchanged
                        )
                    )
                )
            )
        case .retry(_, let retryAfter, _):
            return retried(notBefore: retryAfter.map { date().addingTimeInterval($0) })
        case .unreachable:
            return retried(notBefore: nil)
        case .configurationError:
            return .stopRun(result(.unresolved("configuration")), configurationError: "fake configuration error")
        }
    }
}
