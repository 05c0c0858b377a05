import CivilTime
import Foundation
import ReceiptDomain

/// The request plan of one read from Apple, the same for verifyReceipt, the App Store Server API and
/// notification history (docs/decision-rules.md, "Retries and backoff"): which environment to ask, which
/// page, whether and when to send again. A pure state machine: the caller sends what a `Step` says, tells
/// the plan what came back as an `Answer`, and does the waiting itself (the pipeline on its clock's timers,
/// notification history on its injected clock), so every request can pass the caller's rate limiter and
/// tests can run the plan on a virtual clock.
///
/// The rules, each decided here and nowhere else:
/// - a retryable failure is retried until `policy.maxAttempts` of them in a row; a usable answer starts the
///   count again (each page of a paged read has the whole budget);
/// - the wait before a retry is exponential backoff with jitter (`AttemptPolicy.backoff`), never shorter
///   than Apple's `Retry-After`; a `Retry-After` longer than `policy.maxRetryAfter` gives up;
/// - Apple saying the request belongs to the other environment switches once; a second switch is refused
///   (never a loop);
/// - a usable answer with a next-page token sends for that page; without one the read is done.
public struct AttemptPlan: Sendable, Equatable {
    /// What the last request's answer means for the plan (the caller classifies Apple's answer).
    public enum Answer: Sendable, Equatable {
        /// Usable; `nextPage` is the token of the page that follows, when there is one.
        case usable(nextPage: String?)
        /// Apple says the request belongs to this environment (verifyReceipt's 21007/21008, the Server API's
        /// 4040010 on statuses).
        case wrongEnvironment(AppleEnvironment)
        /// Worth another try; not before `notBefore` when Apple said so (`Retry-After`).
        case retryable(notBefore: Date?)
    }

    /// What the caller does next.
    public enum Step: Sendable, Equatable {
        /// Send now (subject to the rate limiter) to `environment`, for `page` (nil: the first page).
        /// `switching` when this request changes the environment.
        case send(AppleEnvironment, page: String?, switching: Bool)
        /// Send again after `afterNanoseconds`; `failures` retryable failures in a row so far (1 for the
        /// first retry).
        case retry(AppleEnvironment, page: String?, afterNanoseconds: UInt64, failures: Int)
        /// The read is over.
        case finished(End)
    }

    /// How a read ended, as far as the plan is concerned (the caller turns it into its own verdict).
    public enum End: Sendable, Equatable {
        /// The last answer was usable and had no next page.
        case lastPage
        /// Apple asked for `environment` after the one switch allowed (or for the environment just asked).
        case switchRefused(AppleEnvironment)
        /// `failures` retryable failures in a row: the budget is spent.
        case attemptsExhausted(failures: Int)
        /// Apple asked to wait longer than `policy.maxRetryAfter`.
        case retryAfterTooLong(requestedNanoseconds: UInt64)
    }

    public let policy: AttemptPolicy
    /// The environment the next (or last) request goes to.
    public private(set) var environment: AppleEnvironment
    /// The page the next (or last) request asks for (nil: the first).
    public private(set) var page: String?
    /// HTTP requests asked for so far (every `send` and `retry`).
    public private(set) var requests = 0
    /// Retryable failures in a row (since the last usable answer).
    public private(set) var failures = 0
    public private(set) var switched = false

    /// - Parameter page: a stored token to go on from (notification history resumed after a kill).
    public init(policy: AttemptPolicy, startingEnvironment: AppleEnvironment = .production, page: String? = nil) {
        self.policy = policy
        self.environment = startingEnvironment
        self.page = page
    }

    /// The first request of a read: the starting environment and page. Called again after `.lastPage`, it
    /// starts another read (the Server API's history after its statuses) in the environment reached.
    public mutating func start() -> Step {
        requests += 1
        failures = 0
        return .send(environment, page: page, switching: false)
    }

    /// The step after the answer to the last request; `now` is the wall-clock time `Retry-After` is measured
    /// from, `rng` the jitter's randomness.
    public mutating func next(
        after answer: Answer,
        now: Date,
        using rng: inout some RandomNumberGenerator
    ) -> Step {
        switch answer {
        case .usable(let nextPage):
            failures = 0
            guard let nextPage else {
                page = nil
                return .finished(.lastPage)
            }
            page = nextPage
            requests += 1
            return .send(environment, page: nextPage, switching: false)
        case .wrongEnvironment(let target):
            guard !switched, target != environment else { return .finished(.switchRefused(target)) }
            switched = true
            environment = target
            requests += 1
            return .send(target, page: page, switching: true)
        case .retryable(let notBefore):
            failures += 1
            guard failures < policy.maxAttempts else { return .finished(.attemptsExhausted(failures: failures)) }
            let requested = notBefore.map { Self.nanoseconds(from: now, to: $0) } ?? 0
            if requested > policy.maxRetryAfter.clampedNanoseconds {
                return .finished(.retryAfterTooLong(requestedNanoseconds: requested))
            }
            requests += 1
            let wait = max(policy.backoff(failures: failures, using: &rng), requested)
            return .retry(environment, page: page, afterNanoseconds: wait, failures: failures)
        }
    }

    /// `next(after:now:using:)` with the system's random numbers.
    public mutating func next(after answer: Answer, now: Date) -> Step {
        var rng = SystemRandomNumberGenerator()
        return next(after: answer, now: now, using: &rng)
    }

    /// Nanoseconds from `now` to `date` (0 when it is past), saturating far in the future.
    static func nanoseconds(from now: Date, to date: Date) -> UInt64 {
        let seconds = date.timeIntervalSince(now)
        guard seconds > 0 else { return 0 }
        return seconds >= 1.8e10 ? UInt64.max / 2 : UInt64(seconds * 1_000_000_000)
    }
}

extension AttemptPlan.End: CustomStringConvertible {
    /// True when the retry budget is spent.
    public var isExhausted: Bool {
        if case .attemptsExhausted = self { return true }
        return false
    }

    /// For logs and an item's reason: never a token or a payload.
    public var description: String {
        switch self {
        case .lastPage: return "read to the last page"
        case .switchRefused(let environment): return "Apple asked for \(environment.rawValue) after the one switch"
        case .attemptsExhausted(let failures): return "\(failures) attempts"
        case .retryAfterTooLong(let requested):
            return "Apple asks to wait \(requested / 1_000_000_000) s (Retry-After), longer than allowed"
        }
    }
}
