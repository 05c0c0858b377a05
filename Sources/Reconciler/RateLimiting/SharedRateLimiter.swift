import Synchronization

/// A `TokenBucket` (optionally steered by an `AdaptiveRateController`) shared by all the
/// requests of a run, safe to call from any thread.
///
/// The pure types are values; this class owns one of each behind a `Mutex` so that
/// concurrent callers each get their own staggered slot and every response outcome adjusts
/// the same rate. It never sleeps: callers wait for the returned delay themselves.
@available(macOS 15.0, *)
public final class SharedRateLimiter: Sendable {
    private struct State {
        var bucket: TokenBucket
        var controller: AdaptiveRateController?
    }

    private let state: Mutex<State>

    /// - Parameters:
    ///   - bucket: the configured bucket (its rate is the ceiling when adaptive).
    ///   - controller: rate adaptation on throttling; nil keeps the bucket's rate fixed.
    public init(bucket: TokenBucket, controller: AdaptiveRateController? = nil) {
        var bucket = bucket
        if let controller { bucket.setRate(controller.currentRate) }
        state = Mutex(State(bucket: bucket, controller: controller))
    }

    /// Reserves the next send slot; returns the delay until it (zero to send now).
    public func reserve(now: UInt64 = MonotonicClock.now()) -> Duration {
        state.withLock { $0.bucket.reserveDuration(now: now) }
    }

    /// Records a response outcome; with a controller, applies the resulting rate to later
    /// slots. Returns the rate now in force.
    @discardableResult
    public func record(_ outcome: AdaptiveRateController.Outcome, now: UInt64 = MonotonicClock.now()) -> Double {
        state.withLock { state in
            guard var controller = state.controller else { return state.bucket.rate }
            let rate = controller.record(outcome, now: now)
            state.controller = controller
            if rate != state.bucket.rate { state.bucket.setRate(rate) }
            return rate
        }
    }

    /// The rate currently in force, requests per second.
    public var currentRate: Double {
        state.withLock { $0.bucket.rate }
    }
}
