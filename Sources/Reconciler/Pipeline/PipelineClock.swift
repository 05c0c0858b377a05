import Dispatch
import Foundation

/// The time the pipeline runs on: monotonic ticks for rate limits and backoff, the wall clock for
/// `Retry-After` dates, and timers. Injected so the pipeline can run in-process on a virtual clock in
/// tests; production uses `SystemPipelineClock`.
public protocol PipelineClock: Sendable {
    /// Monotonic nanoseconds (never affected by wall-clock changes).
    func now() -> UInt64
    /// The wall-clock time.
    func date() -> Date
    /// Runs `work` on `queue` after `nanoseconds`.
    func schedule(after nanoseconds: UInt64, on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void)
}

extension PipelineClock {
    /// Nanoseconds from now until `date` (0 when it is past).
    func nanoseconds(until date: Date) -> UInt64 {
        let seconds = date.timeIntervalSince(self.date())
        guard seconds > 0 else { return 0 }
        return seconds >= 1.8e10 ? UInt64.max / 2 : UInt64(seconds * 1_000_000_000)
    }
}
