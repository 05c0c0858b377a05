import Dispatch
import Synchronization

/// Runs swift-certificates' `async` chain validation to completion for a synchronous caller.
///
/// The task runs on this executor's own serial queue (a task executor preference), not on Swift
/// concurrency's cooperative pool, so a caller blocked here never waits for a pool thread it may itself
/// be holding. Used only on a chain cache miss: a handful of times per run.
final class BlockingAsyncRunner: TaskExecutor, Sendable {
    static let shared = BlockingAsyncRunner()

    private let queue = DispatchQueue(label: "AppStoreSignedData.chain-validation")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    /// Runs `operation` and waits for its result. Never call it from the executor's own queue.
    func run<Result: Sendable>(_ operation: @escaping @Sendable () async -> Result) -> Result {
        let done = DispatchSemaphore(value: 0)
        let box = Mutex<Result?>(nil)
        Task(executorPreference: self) {
            let value = await operation()
            box.withLock { $0 = value }
            done.signal()
        }
        done.wait()
        return box.withLock { value in
            guard let result = value else { preconditionFailure("the task finished without a result") }
            return result
        }
    }
}
