import Foundation

/// Deterministic crash injection for the kill -9 drills and tests: with
/// `RENEWAL_RECONCILER_CRASH_AT=<point>:<n>` in the environment, the process sends itself SIGKILL the
/// n-th time it reaches `<point>` (no cleanup, no flush: exactly a `kill -9` at that instant).
///
/// Points: `scan-page` (a scan page inserted, its transaction not yet committed), `batch-write`
/// (a result batch's subscription updates done, its transaction not yet committed), `batch-committed`
/// (right after a batch commit), `notifications-page` (right after a page of notification history
/// commits), `report-folder` (a report folder's files written to its temporary folder, not yet renamed
/// into place), `report-downloaded` (`apple-reports download`: a report's file stored and committed, or its
/// answer listed). Unset (always, in production) it costs one load per call.
public enum CrashPoints {
    private static let target: (name: String, count: Int)? = {
        guard let spec = ProcessInfo.processInfo.environment["RENEWAL_RECONCILER_CRASH_AT"] else { return nil }
        let parts = spec.split(separator: ":")
        guard parts.count == 2, let n = Int(parts[1]), n > 0 else { return nil }
        return (String(parts[0]), n)
    }()
    private static let counter = Counter()

    public static func reach(_ point: String) {
        guard let target, target.name == point else { return }
        if counter.increment() == target.count {
            FileHandle.standardError.write(Data("crash point \(point):\(target.count) reached: SIGKILL\n".utf8))
            kill(getpid(), SIGKILL)
        }
    }

    private final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var value = 0
        func increment() -> Int {
            lock.lock()
            defer { lock.unlock() }
            value += 1
            return value
        }
    }
}
