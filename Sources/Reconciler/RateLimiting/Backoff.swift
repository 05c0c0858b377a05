import CivilTime

/// Exponential backoff with jitter for one request's retries, bounded in both the number
/// of attempts and the length of each delay.
///
/// Copy a configured value per request (it is a value type with per-request state) and call
/// `nextDelay(now:earliest:using:)` after each failed attempt. A `Retry-After`-derived
/// earliest time is honoured (the delay is never shorter), but a server asking for more
/// than `maxRetryAfter` makes the request give up instead of stalling the run.
public struct Backoff: Sendable {
    /// How randomness spreads the retries of many requests apart.
    public enum Jitter: Sendable, Equatable {
        /// `min(cap, base * 2^(n-1))`, no randomness (for tests and diagnostics).
        case none
        /// Uniform in `0 ... min(cap, base * 2^(n-1))` ("full jitter").
        case full
        /// `min(cap, uniform(base ... previous * 3))` ("decorrelated jitter").
        case decorrelated
    }

    /// Why no further attempt should be made.
    public enum GiveUpReason: Sendable, Equatable {
        /// `maxAttempts` attempts have been made and failed.
        case attemptsExhausted(attempts: Int)
        /// The server asked to wait longer than `maxRetryAfter` (nanoseconds requested).
        case retryAfterTooLong(requestedNanoseconds: UInt64)
    }

    /// What to do after a failed attempt.
    public enum Decision: Sendable, Equatable {
        /// Try again after this many nanoseconds.
        case retry(afterNanoseconds: UInt64)
        /// Stop retrying.
        case giveUp(GiveUpReason)
    }

    /// The first delay (before jitter).
    public let base: Duration
    /// The largest delay backoff alone produces.
    public let cap: Duration
    /// The total number of attempts, the first one included (1 means never retry).
    public let maxAttempts: Int
    /// The jitter strategy.
    public let jitter: Jitter
    /// The longest server-requested wait that is honoured; longer ones give up.
    public let maxRetryAfter: Duration
    /// The number of failed attempts recorded so far.
    public private(set) var failedAttempts = 0
    private var previousDelay: UInt64 = 0

    /// - Throws: `RateLimitConfigurationError` unless `0 < base <= cap`, `maxAttempts >= 1`
    ///   and `maxRetryAfter >= 0`.
    public init(
        base: Duration = .milliseconds(500),
        cap: Duration = .seconds(30),
        maxAttempts: Int = 5,
        jitter: Jitter = .full,
        maxRetryAfter: Duration = .seconds(300)
    ) throws {
        guard base > .zero else {
            throw RateLimitConfigurationError(parameter: "base", problem: "must be > 0, got \(base)")
        }
        guard cap >= base else {
            throw RateLimitConfigurationError(parameter: "cap", problem: "must be >= base (\(base)), got \(cap)")
        }
        guard maxAttempts >= 1 else {
            throw RateLimitConfigurationError(parameter: "maxAttempts", problem: "must be >= 1, got \(maxAttempts)")
        }
        guard maxRetryAfter >= .zero else {
            throw RateLimitConfigurationError(
                parameter: "maxRetryAfter",
                problem: "must be >= 0, got \(maxRetryAfter)"
            )
        }
        self.base = base
        self.cap = cap
        self.maxAttempts = maxAttempts
        self.jitter = jitter
        self.maxRetryAfter = maxRetryAfter
    }

    /// Records a failed attempt and decides whether and when to try again.
    /// - Parameters:
    ///   - now: the current monotonic tick in nanoseconds.
    ///   - earliest: the monotonic tick before which the server asked not to retry
    ///     (from `Retry-After`), if any; the delay is then at least `earliest - now`.
    ///   - rng: the random source for jitter (inject a `SeededRandomNumberGenerator` in tests).
    public mutating func nextDelay(
        now: UInt64,
        earliest: UInt64? = nil,
        using rng: inout some RandomNumberGenerator
    ) -> Decision {
        failedAttempts += 1
        if failedAttempts >= maxAttempts {
            return .giveUp(.attemptsExhausted(attempts: failedAttempts))
        }
        let requested = earliest.map { $0 > now ? $0 - now : 0 } ?? 0
        if requested > maxRetryAfter.clampedNanoseconds {
            return .giveUp(.retryAfterTooLong(requestedNanoseconds: requested))
        }
        let jittered = jitteredDelay(using: &rng)
        previousDelay = jittered
        return .retry(afterNanoseconds: max(jittered, requested))
    }

    /// `nextDelay(now:earliest:using:)` with the system random number generator.
    public mutating func nextDelay(now: UInt64, earliest: UInt64? = nil) -> Decision {
        var rng = SystemRandomNumberGenerator()
        return nextDelay(now: now, earliest: earliest, using: &rng)
    }

    /// Forgets the failures so far (e.g. after a success when the value is reused).
    public mutating func reset() {
        failedAttempts = 0
        previousDelay = 0
    }

    /// The exponential ceiling for the current attempt: `min(cap, base * 2^(failedAttempts-1))`.
    var exponentialCeiling: UInt64 {
        let baseNanos = base.clampedNanoseconds
        let capNanos = cap.clampedNanoseconds
        let shift = failedAttempts - 1
        if shift >= 63 || baseNanos > (capNanos >> UInt64(shift)) { return capNanos }
        return min(capNanos, baseNanos << UInt64(shift))
    }

    private func jitteredDelay(using rng: inout some RandomNumberGenerator) -> UInt64 {
        let baseNanos = base.clampedNanoseconds
        let capNanos = cap.clampedNanoseconds
        switch jitter {
        case .none:
            return exponentialCeiling
        case .full:
            return UInt64.random(in: 0...exponentialCeiling, using: &rng)
        case .decorrelated:
            let previous = max(previousDelay, baseNanos)
            let (tripled, overflow) = previous.multipliedReportingOverflow(by: 3)
            let upper = min(capNanos, overflow ? capNanos : tripled)
            return upper <= baseNanos ? min(baseNanos, capNanos) : UInt64.random(in: baseNanos...upper, using: &rng)
        }
    }
}
