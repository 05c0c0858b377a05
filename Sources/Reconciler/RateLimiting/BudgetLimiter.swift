/// One rate budget's limiter, confined to the pipeline's queue: the token bucket spaces reservations at
/// the current rate, the send window is the hard one-second guarantee on requests as Apple counts them, the
/// adaptive controller slows the budget when Apple pushes back, and `pausedUntil` holds every send of the
/// budget until Apple's `Retry-After`. Pure: ticks come from the pipeline's clock.
struct BudgetLimiter {
    let budget: RateBudget
    private(set) var bucket: TokenBucket
    private(set) var window: SendWindow
    private(set) var adaptive: AdaptiveRateController
    /// No send of this budget before this tick (Apple's `Retry-After`); 0 when not paused.
    private(set) var pausedUntil: UInt64 = 0

    init(budget: RateBudget) throws {
        self.budget = budget
        self.bucket = try TokenBucket(rate: budget.rate, burst: 1)
        self.window = SendWindow(rate: budget.rate)
        self.adaptive = try AdaptiveRateController(configuredRate: budget.rate)
    }

    /// The current rate (the configured one, or lower while Apple pushes back).
    var rate: Double { bucket.rate }

    /// Reserves the next slot: nanoseconds from `now` until the request may try the window.
    mutating func reserve(now: UInt64) -> UInt64 {
        let slot = bucket.reserve(now: now)
        return max(slot, pausedUntil > now ? pausedUntil - now : 0)
    }

    /// Sends now if the window (and any pause) allows; else the nanoseconds to wait.
    mutating func trySend(now: UInt64) -> UInt64? {
        if pausedUntil > now { return pausedUntil - now }
        return window.trySend(now: now)
    }

    /// The request sent at `sentAt` was answered at `now`: its send window slot is released sooner
    /// (`SendWindow.answered(sentAt:now:)`).
    mutating func answered(sentAt: UInt64, now: UInt64) {
        window.answered(sentAt: sentAt, now: now)
    }

    /// Records an answer; returns the new rate when it changed.
    mutating func record(throttled: Bool, now: UInt64) -> Double? {
        let rate = adaptive.record(throttled ? .throttled : .success, now: now)
        guard rate != bucket.rate else { return nil }
        bucket.setRate(rate)
        window.setRate(rate)
        return rate
    }

    /// A new configured rate (a worker's share of the budget): the bucket and the window change at once, the window
    /// keeping its recent sends; Apple's push-back starts over from the new rate.
    mutating func setConfiguredRate(_ rate: Double) {
        guard let controller = try? AdaptiveRateController(configuredRate: rate) else { return }
        adaptive = controller
        bucket.setRate(rate)
        window.setRate(rate)
    }

    /// Holds every send of this budget until `until` (never shortens an existing pause).
    mutating func pause(until: UInt64) {
        pausedUntil = max(pausedUntil, until)
    }
}
