/// The hard guarantee on requests actually sent: never more than `floor(rate)` in any one-second window,
/// and consecutive sends at least 0.9 of an interval (`1 / rate`) apart.
///
/// The token bucket spaces *reservations*; timers on a busy queue can still fire late and together, and
/// after a stall a naive sender would catch up in a burst. This window remembers when the last
/// `floor(rate)` requests left and admits a send only when fewer than that many left in the past second
/// and the previous one left long enough ago, so even late timers firing together leave one by one and a
/// run catches up only slightly faster than the rate. Pure: the caller passes monotonic ticks
/// (nanoseconds, see `MonotonicClock`) and schedules its own wake-up; not thread-safe (guard it with the
/// caller's queue or lock).
public struct SendWindow: Sendable {
    /// Requests per second in force.
    public private(set) var rate: Double
    /// Send times of the last `capacity` requests, oldest first.
    private var sentTimes: [UInt64] = []

    /// One second in nanoseconds.
    private static let window: UInt64 = 1_000_000_000

    public init(rate: Double) {
        self.rate = Self.clamped(rate)
    }

    /// At most this many sends in any one-second window: `floor(rate)`, at least 1.
    public var capacity: Int { max(1, Int(rate.rounded(.down))) }

    /// The least spacing between two sends: 0.9 of `1 / rate`.
    public var minimumSpacing: UInt64 {
        let interval = (1_000_000_000.0 / rate).rounded(.up)
        return interval >= 1.8e19 ? UInt64.max / 2 : UInt64(interval) / 10 * 9
    }

    /// Changes the rate for sends from now on (the recorded send times stay).
    public mutating func setRate(_ newRate: Double) {
        rate = Self.clamped(newRate)
        if sentTimes.count > capacity { sentTimes.removeFirst(sentTimes.count - capacity) }
    }

    /// The earliest tick at which the next request may leave (0 when nothing was sent yet).
    public func earliestSend() -> UInt64 {
        var notBefore: UInt64 = 0
        if sentTimes.count >= capacity, let oldest = sentTimes.first { notBefore = oldest &+ Self.window }
        if let last = sentTimes.last { notBefore = max(notBefore, last &+ minimumSpacing) }
        return notBefore
    }

    /// Sends now if the window allows it: returns nil after recording the send, or the nanoseconds to
    /// wait before asking again (nothing recorded).
    public mutating func trySend(now: UInt64) -> UInt64? {
        let notBefore = earliestSend()
        if now < notBefore { return notBefore - now }
        if sentTimes.count >= capacity { sentTimes.removeFirst(sentTimes.count - capacity + 1) }
        sentTimes.append(now)
        return nil
    }

    private static func clamped(_ rate: Double) -> Double {
        rate.isFinite ? max(rate, TokenBucket.minimumRate) : TokenBucket.minimumRate
    }
}
