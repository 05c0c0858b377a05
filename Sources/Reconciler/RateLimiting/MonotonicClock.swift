import Dispatch

/// The monotonic time source used by the rate-limiting types: nanoseconds since an
/// arbitrary boot-relative origin, never affected by wall-clock (NTP, `Date`) changes.
///
/// The pure types (`TokenBucket`, `SendWindow`, `AdaptiveRateController`) take a tick as a
/// parameter so tests can inject any clock; production code passes `MonotonicClock.now()`.
public enum MonotonicClock {
    /// The current monotonic tick in nanoseconds (`DispatchTime.now().uptimeNanoseconds`).
    public static func now() -> UInt64 {
        DispatchTime.now().uptimeNanoseconds
    }
}
