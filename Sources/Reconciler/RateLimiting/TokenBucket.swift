/// A token bucket that hands out send slots at `rate` per second with up to `burst`
/// slots at once, and returns how long the caller must wait instead of sleeping.
///
/// It is implemented as the generic cell rate algorithm (a "virtual scheduling" token
/// bucket) in integer nanoseconds, so it is exact: over any window of length T at most
/// `burst + rate * T` slots are granted, and with `burst == 1` any half-open one-second
/// window contains at most `rate` slots. Reserving ahead is allowed, so N callers that
/// reserve at the same instant get staggered slots `1 / rate` apart. Time is a monotonic
/// tick in nanoseconds (see `MonotonicClock`), never `Date`.
///
/// The struct is a plain value: share it between threads by guarding it with a lock.
public struct TokenBucket: Sendable {
    /// Slots per second currently in force.
    public private(set) var rate: Double
    /// The largest number of slots that may be granted at the same instant.
    public let burst: Int
    /// Nanoseconds between two slots at the current rate, rounded up (so never faster than `rate`).
    public private(set) var intervalNanoseconds: UInt64
    /// Theoretical arrival time: the tick at which the bucket would be empty again.
    private var theoreticalArrival: UInt64?

    /// The smallest rate `setRate(_:)` accepts; lower values are raised to it.
    public static let minimumRate = 0.001

    /// Creates a bucket granting `rate` slots per second with a burst of `burst` (default 1).
    /// - Throws: `RateLimitConfigurationError` if `rate` is not a finite number >= 0.001 or `burst` < 1.
    public init(rate: Double, burst: Int = 1) throws {
        guard rate.isFinite, rate >= Self.minimumRate else {
            throw RateLimitConfigurationError(
                parameter: "rate",
                problem: "must be a finite number >= \(Self.minimumRate) per second, got \(rate)"
            )
        }
        guard burst >= 1 else {
            throw RateLimitConfigurationError(parameter: "burst", problem: "must be >= 1, got \(burst)")
        }
        self.rate = rate
        self.burst = burst
        self.intervalNanoseconds = Self.interval(for: rate)
    }

    /// Reserves the next slot and returns the delay in nanoseconds from `now` until it
    /// starts (0 when the caller may send at once). Never sleeps.
    /// - Parameter now: the current monotonic tick in nanoseconds; must not go backwards
    ///   (an earlier tick is treated as the latest one seen).
    public mutating func reserve(now: UInt64) -> UInt64 {
        let tat = max(theoreticalArrival ?? now, now)
        let allowedAt = Self.saturatingSubtract(tat, tolerance)
        let grant = max(now, allowedAt)
        theoreticalArrival = Self.saturatingAdd(tat, intervalNanoseconds)
        return grant - now
    }

    /// The delay the next `reserve(now:)` would return, without reserving anything.
    public func peekDelay(now: UInt64) -> UInt64 {
        let tat = max(theoreticalArrival ?? now, now)
        return max(now, Self.saturatingSubtract(tat, tolerance)) - now
    }

    /// Changes the rate for slots reserved from now on; slots already handed out keep their
    /// times. Values below `minimumRate` (or not finite) are raised to `minimumRate`.
    public mutating func setRate(_ newRate: Double) {
        let clamped = newRate.isFinite ? max(newRate, Self.minimumRate) : Self.minimumRate
        rate = clamped
        intervalNanoseconds = Self.interval(for: clamped)
    }

    /// How far ahead of the theoretical arrival time a slot may be granted (`burst - 1` intervals).
    private var tolerance: UInt64 {
        let (value, overflow) = intervalNanoseconds.multipliedReportingOverflow(by: UInt64(burst - 1))
        return overflow ? .max : value
    }

    private static func interval(for rate: Double) -> UInt64 {
        let nanos = (1_000_000_000.0 / rate).rounded(.up)
        return nanos >= 1.8e19 ? UInt64.max / 2 : max(1, UInt64(nanos))
    }

    private static func saturatingAdd(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : sum
    }

    private static func saturatingSubtract(_ a: UInt64, _ b: UInt64) -> UInt64 {
        a > b ? a - b : 0
    }
}
