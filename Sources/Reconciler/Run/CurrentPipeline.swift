import Foundation

/// The pipeline a run's process is running now, its share of the rate limits, its results and request statistics so
/// far, and whether it was asked to stop: set on the run's thread (and the pipeline's progress), read from the
/// heartbeat, the lock watch and the signal handler.
final class CurrentPipeline: @unchecked Sendable {
    private let lock = NSLock()
    private var _pipeline: ReconciliationPipeline?
    private var _share = 1.0
    private var _stop: String?
    private var _runEnded = false
    private var _finished = (written: 0, stats: AppleRequestStats())
    private var _round = (written: 0, stats: AppleRequestStats())

    /// Why the process was asked to stop (a signal, the lost run lock, the run ended elsewhere), nil while it goes on.
    var stopRequested: String? { locked { _stop } }

    /// Whether a round was stopped because the run ended elsewhere (`stopRound`).
    var runEndedElsewhere: Bool { locked { _runEnded } }

    // The pipeline's `setRateShare` and `requestStop` only enqueue on its queue: they are called under the lock, so
    // the pipeline sees shares and stops in the order they were set here.

    /// Asks the running pipeline (and every later one) to stop: requests in flight finish, the rest stays pending.
    func stop(_ why: String) {
        locked {
            if _stop == nil { _stop = why }
            _pipeline?.requestStop(.interrupted(why))
        }
    }

    /// Stops the running pipeline only (the run ended elsewhere): the rounds end as the coordination finds the run.
    func stopRound(_ why: String) {
        locked {
            _runEnded = true
            _pipeline?.requestStop(.interrupted(why))
        }
    }

    /// Makes `pipeline` the running one at this process's share; stopped at once if a stop came first.
    func start(_ pipeline: ReconciliationPipeline) {
        locked {
            _pipeline = pipeline
            pipeline.setRateShare(_share)
            if let stop = _stop { pipeline.requestStop(.interrupted(stop)) }
        }
    }

    /// The round ended: its results and statistics are in `total` (the finished rounds').
    func finished(_ total: ReconciliationPipeline.Result) {
        locked {
            _pipeline = nil
            _finished = (total.written, total.stats)
            _round = (0, AppleRequestStats())
        }
    }

    /// Sets this process's share of the rate limits, for the running pipeline and the next.
    func setShare(_ share: Double) {
        locked {
            _share = share
            _pipeline?.setRateShare(share)
        }
    }

    var share: Double { locked { _share } }

    /// The running round's results written and request statistics, as of its last batch write.
    func roundProgress(written: Int, stats: AppleRequestStats) {
        locked { _round = (written, stats) }
    }

    /// The process's results and requests so far: the finished rounds' and the running one's.
    var progressSoFar: (written: Int, stats: AppleRequestStats) {
        locked {
            var stats = _finished.stats
            stats.merge(_round.stats)
            return (_finished.written + _round.written, stats)
        }
    }

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }
}
