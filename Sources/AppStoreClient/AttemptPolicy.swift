import CivilTime

/// The numbers an `AttemptPlan` decides with: how many retryable failures a request may have, how the
/// waits between them grow (exponential backoff with full jitter), and the longest `Retry-After` honoured
/// (docs/decision-rules.md, "Retries and backoff").
public struct AttemptPolicy: Sendable, Equatable {
    /// Retryable failures before the request gives up (the last one included; 1 means never retry).
    public var maxAttempts: Int
    /// The first wait (before jitter).
    public var base: Duration
    /// The longest wait backoff alone produces.
    public var cap: Duration
    public var jitter: Jitter
    /// The longest wait Apple may ask for (`Retry-After`); a longer one gives up instead of stalling the run.
    public var maxRetryAfter: Duration

    /// How randomness spreads the retries of many requests apart.
    public enum Jitter: Sendable, Equatable {
        /// `min(cap, base * 2^(n-1))`, no randomness (for tests and diagnostics).
        case none
        /// Uniform in `0 ... min(cap, base * 2^(n-1))` ("full jitter").
        case full
    }

    /// Values out of range are brought into it: at least one attempt, `0 < base <= cap`, `maxRetryAfter >= 0`.
    public init(
        maxAttempts: Int = 5,
        base: Duration = .milliseconds(500),
        cap: Duration = .seconds(30),
        jitter: Jitter = .full,
        maxRetryAfter: Duration = .seconds(300)
    ) {
        self.maxAttempts = max(1, maxAttempts)
        self.base = max(base, .nanoseconds(1))
        self.cap = max(cap, self.base)
        self.jitter = jitter
        self.maxRetryAfter = max(maxRetryAfter, .zero)
    }

    /// The exponential ceiling before the retry that follows failure number `failures` (1-based):
    /// `min(cap, base * 2^(failures-1))`.
    public func ceiling(failures: Int) -> UInt64 {
        let baseNanos = base.clampedNanoseconds
        let capNanos = cap.clampedNanoseconds
        let shift = max(0, failures - 1)
        if shift >= 63 || baseNanos > (capNanos >> UInt64(shift)) { return capNanos }
        return min(capNanos, baseNanos << UInt64(shift))
    }

    /// The backoff before the retry that follows failure number `failures`, jittered.
    public func backoff(failures: Int, using rng: inout some RandomNumberGenerator) -> UInt64 {
        let ceiling = ceiling(failures: failures)
        switch jitter {
        case .none: return ceiling
        case .full: return UInt64.random(in: 0...ceiling, using: &rng)
        }
    }
}
