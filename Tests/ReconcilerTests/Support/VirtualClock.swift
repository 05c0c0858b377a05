import Dispatch
import Foundation

@testable import Reconciler

/// A `PipelineClock` whose time moves only when the test says: timers wait in a list, and `drive` runs the
/// pipeline to completion by letting it settle, then jumping to the earliest timer and firing it (on its
/// queue, synchronously). Thousands of virtual seconds take milliseconds.
final class VirtualClock: PipelineClock, @unchecked Sendable {
    private struct Timer {
        let deadline: UInt64
        let order: Int
        let queue: DispatchQueue
        let work: @Sendable () -> Void
    }

    /// The wall-clock date at tick 0.
    let epoch: Date
    private let lock = NSLock()
    private var ticks: UInt64 = 1_000_000_000
    private var timers: [Timer] = []
    private var scheduled = 0

    init(epoch: Date = Date(timeIntervalSince1970: 1_790_000_000)) {
        self.epoch = epoch
    }

    func now() -> UInt64 { lock.withLock { ticks } }

    func date() -> Date { epoch.addingTimeInterval(Double(now()) / 1e9) }

    func schedule(after nanoseconds: UInt64, on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) {
        lock.withLock {
            let deadline = ticks &+ nanoseconds
            timers.append(Timer(deadline: deadline, order: scheduled, queue: queue, work: work))
            scheduled += 1
        }
    }

    /// Runs `pipeline` until its completion: settle, fire the earliest timer, repeat. `beforeEachTimer`
    /// may act at the virtual time of the next timer (for example, ask the pipeline to stop).
    func drive(
        _ pipeline: ReconciliationPipeline,
        beforeEachTimer: (UInt64) -> Void = { _ in }
    ) -> ReconciliationPipeline.Result {
        let box = Box()
        pipeline.start { result in box.set(result) }
        while true {
            pipeline.settle()
            if let result = box.get() { return result }
            guard let timer = popEarliest() else {
                pipeline.settle()
                if let result = box.get() { return result }
                fatalError("the pipeline is stuck: no timer left and not finished")
            }
            beforeEachTimer(timer.deadline)
            timer.queue.sync(execute: timer.work)
        }
    }

    private func popEarliest() -> Timer? {
        lock.withLock {
            guard
                let index = timers.indices.min(by: {
                    (timers[$0].deadline, timers[$0].order) < (timers[$1].deadline, timers[$1].order)
                })
            else { return nil }
            let timer = timers.remove(at: index)
            ticks = max(ticks, timer.deadline)
            return timer
        }
    }

    private final class Box: @unchecked Sendable {
        private let lock = NSLock()
        private var value: ReconciliationPipeline.Result?
        func set(_ result: ReconciliationPipeline.Result) { lock.withLock { value = result } }
        func get() -> ReconciliationPipeline.Result? { lock.withLock { value } }
    }
}
