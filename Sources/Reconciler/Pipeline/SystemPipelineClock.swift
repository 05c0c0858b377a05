import Dispatch
import Foundation

/// The real clock: `MonotonicClock` ticks, `Date()`, and Dispatch timers.
public struct SystemPipelineClock: PipelineClock {
    public init() {}

    public func now() -> UInt64 { MonotonicClock.now() }

    public func date() -> Date { Date() }

    public func schedule(after nanoseconds: UInt64, on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) {
        if nanoseconds == 0 {
            queue.async(execute: work)
        } else {
            queue.asyncAfter(deadline: .now() + .nanoseconds(Int(min(nanoseconds, UInt64(Int.max)))), execute: work)
        }
    }
}
