import Foundation

/// Decides when Apple is down rather than failing a few requests, so the run stops (`partial`, exit 69,
/// every unfinished item pending for `run --resume`) instead of crawling through the outage with every
/// item burning its retries (docs/architecture.md, "Apple outages").
///
/// Pure: no clock, no I/O; time is the pipeline's monotonic ticks (nanoseconds), passed in. It trips when
/// **both** hold: at least `failureThreshold` answers in a row were "Apple unreachable" (a transport
/// failure, HTTP 5xx, verifyReceipt 21005 or 21100-21199), **and** no good answer arrived for `window`
/// (counted from the run's start until the first good answer). Either alone is too eager: at 50 requests a
/// second, a few seconds of refused connections make 50 failures in a row; on a slow run, a handful of
/// timeouts can span two minutes. Any other answer (a decision, a 4xx, a 429: Apple answered) resets both.
/// A `failureThreshold` of 0 turns the breaker off.
public struct OutageBreaker: Sendable {
    public static let defaultFailures = 50
    public static let defaultWindowSeconds: Double = 120

    /// Consecutive unreachable answers needed (0: never trips).
    public let failureThreshold: Int
    /// Nanoseconds without a good answer needed.
    public let window: UInt64
    /// Unreachable answers since the last good one.
    public private(set) var consecutiveFailures = 0
    /// When the last good answer arrived (or the run started).
    public private(set) var lastGoodAt: UInt64
    /// The host and reason of the latest unreachable answer.
    public private(set) var lastFailure: (host: String, reason: String)?
    public private(set) var isTripped = false

    public init(failures: Int, windowSeconds: Double, start: UInt64) {
        failureThreshold = max(0, failures)
        window = windowSeconds > 0 ? UInt64(min(windowSeconds, 1e9) * 1_000_000_000) : 0
        lastGoodAt = start
    }

    public init(options: RunOptions, start: UInt64) {
        self.init(failures: options.outageFailures, windowSeconds: options.outageWindowSeconds, start: start)
    }

    /// Apple answered (whatever it said): the outage, if any, is over.
    public mutating func recordAnswer(now: UInt64) {
        guard !isTripped else { return }
        consecutiveFailures = 0
        lastGoodAt = max(lastGoodAt, now)
    }

    /// Apple could not be reached on `host`; returns true when this failure trips the breaker (once).
    public mutating func recordUnreachable(host: String, reason: String, now: UInt64) -> Bool {
        guard !isTripped else { return false }
        consecutiveFailures += 1
        lastFailure = (host, reason)
        guard failureThreshold > 0, consecutiveFailures >= failureThreshold, now &- lastGoodAt >= window,
            now >= lastGoodAt
        else { return false }
        isTripped = true
        return true
    }

    /// Seconds since the last good answer (or the start), at `now`.
    public func secondsWithoutAnswer(now: UInt64) -> Double {
        now > lastGoodAt ? Double(now - lastGoodAt) / 1e9 : 0
    }

    /// The run's error once tripped: names the host and the last failure (never a secret or a receipt:
    /// the reason is a transport error or a status, and passes through the `Redactor` besides).
    public func message(now: UInt64) -> String {
        let host = lastFailure?.host ?? "?"
        let reason = String(Redactor.shared.redact(lastFailure?.reason ?? "?").prefix(300))
        return
            "Apple unreachable: \(host), last failure: \(reason) (\(consecutiveFailures) failures in a row, "
            + "no answer for \(Int(secondsWithoutAnswer(now: now))) s)"
    }

    /// Why `answer` says Apple is unreachable, or nil when Apple answered.
    public static func unreachableReason(_ answer: SourceAnswer) -> String? {
        if let failure = answer.transportFailure { return failure }
        if let http = answer.httpStatus, (500...599).contains(http) { return "HTTP \(http)" }
        if let status = answer.appleStatus, status == 21005 || (21100...21199).contains(status) {
            return "Apple status \(status)"
        }
        return nil
    }
}
