import CivilTime

/// Decides the effective request rate from response outcomes: additive increase,
/// multiplicative decrease (AIMD), never above the configured rate.
///
/// Repeated throttling (`throttleThreshold` throttled responses, HTTP 429/503, within
/// `throttleWindow`) cuts the rate by `decreaseFactor`, at most once per window so that
/// the burst of 429s from requests already in flight counts once, and never below
/// `minimumRate`. After `recoveryInterval` without throttling, each success raises the
/// rate by `recoveryStep` (at most once per interval) until it is back at the configured
/// rate. Pure: time is injected as a monotonic tick in nanoseconds.
public struct AdaptiveRateController: Sendable {
    /// The outcome of one request, as far as rate control cares.
    public enum Outcome: Sendable, Equatable {
        /// The server answered normally (any non-throttling answer, errors included).
        case success
        /// The server pushed back (HTTP 429 or 503).
        case throttled
    }

    /// The configured rate (requests per second): the ceiling.
    public let configuredRate: Double
    /// The floor below which cuts never go.
    public let minimumRate: Double
    /// The multiplier applied on a cut, in (0, 1).
    public let decreaseFactor: Double
    /// How many throttled responses within `throttleWindow` trigger a cut.
    public let throttleThreshold: Int
    /// The window in which throttled responses are counted; also the minimum time between cuts.
    public let throttleWindow: Duration
    /// The quiet time (no throttling, no change) before each increase.
    public let recoveryInterval: Duration
    /// The amount (requests per second) added per increase.
    public let recoveryStep: Double
    /// The rate currently in force.
    public private(set) var currentRate: Double

    private var recentThrottles: [UInt64] = []
    private var lastCut: UInt64?
    private var lastChangeOrThrottle: UInt64?

    /// - Parameters:
    ///   - configuredRate: the ceiling, requests per second (> 0).
    ///   - minimumRate: the floor; default `min(configuredRate, max(1, 5% of configuredRate))`.
    ///   - decreaseFactor: multiplier on a cut, default 0.5.
    ///   - throttleThreshold: throttled responses within the window that trigger a cut, default 2.
    ///   - throttleWindow: default 10 s.
    ///   - recoveryInterval: default 5 s.
    ///   - recoveryStep: default 10% of the configured rate.
    /// - Throws: `RateLimitConfigurationError` for values outside the ranges above.
    public init(
        configuredRate: Double,
        minimumRate: Double? = nil,
        decreaseFactor: Double = 0.5,
        throttleThreshold: Int = 2,
        throttleWindow: Duration = .seconds(10),
        recoveryInterval: Duration = .seconds(5),
        recoveryStep: Double? = nil
    ) throws {
        guard configuredRate.isFinite, configuredRate > 0 else {
            throw RateLimitConfigurationError(
                parameter: "configuredRate",
                problem: "must be a finite number > 0, got \(configuredRate)"
            )
        }
        let floor = minimumRate ?? min(configuredRate, max(1, configuredRate * 0.05))
        guard floor.isFinite, floor > 0, floor <= configuredRate else {
            throw RateLimitConfigurationError(
                parameter: "minimumRate",
                problem: "must be > 0 and <= configuredRate (\(configuredRate)), got \(floor)"
            )
        }
        guard decreaseFactor.isFinite, decreaseFactor > 0, decreaseFactor < 1 else {
            throw RateLimitConfigurationError(
                parameter: "decreaseFactor",
                problem: "must be in (0, 1), got \(decreaseFactor)"
            )
        }
        guard throttleThreshold >= 1 else {
            throw RateLimitConfigurationError(
                parameter: "throttleThreshold",
                problem: "must be >= 1, got \(throttleThreshold)"
            )
        }
        guard throttleWindow > .zero, recoveryInterval > .zero else {
            throw RateLimitConfigurationError(
                parameter: throttleWindow > .zero ? "recoveryInterval" : "throttleWindow",
                problem: "must be > 0"
            )
        }
        let step = recoveryStep ?? configuredRate * 0.1
        guard step.isFinite, step > 0 else {
            throw RateLimitConfigurationError(parameter: "recoveryStep", problem: "must be > 0, got \(step)")
        }
        self.configuredRate = configuredRate
        self.minimumRate = floor
        self.decreaseFactor = decreaseFactor
        self.throttleThreshold = throttleThreshold
        self.throttleWindow = throttleWindow
        self.recoveryInterval = recoveryInterval
        self.recoveryStep = step
        self.currentRate = configuredRate
    }

    /// Records one response outcome at monotonic tick `now` and returns the rate to use from now on.
    @discardableResult
    public mutating func record(_ outcome: Outcome, now: UInt64) -> Double {
        let window = throttleWindow.clampedNanoseconds
        switch outcome {
        case .throttled:
            lastChangeOrThrottle = now
            recentThrottles.append(now)
            recentThrottles.removeAll { now > $0 && now - $0 > window }
            let cooledDown = lastCut.map { now < $0 || now - $0 >= window } ?? true
            if recentThrottles.count >= throttleThreshold && cooledDown {
                currentRate = max(minimumRate, currentRate * decreaseFactor)
                lastCut = now
                recentThrottles.removeAll()
            }
        case .success:
            guard currentRate < configuredRate else { break }
            let quiet = recoveryInterval.clampedNanoseconds
            let since = lastChangeOrThrottle ?? 0
            if now >= since && now - since >= quiet {
                currentRate = min(configuredRate, currentRate + recoveryStep)
                lastChangeOrThrottle = now
            }
        }
        return currentRate
    }
}
