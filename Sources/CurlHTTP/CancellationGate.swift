import Synchronization

/// Orders "start the transfer" against "the task was cancelled" for the async API, so a
/// cancellation that arrives before the transfer was queued is not lost.
///
/// Both actions run under the lock; since the driver queue is serial and FIFO, a cancel enqueued
/// after a start is always processed after it.
final class CancellationGate: Sendable {
    private enum State {
        case idle
        case started
        case cancelled
    }

    private let state = Mutex(State.idle)

    /// Runs `action` unless cancellation came first; returns whether it ran.
    func start(_ action: () -> Void) -> Bool {
        state.withLock { state in
            guard state == .idle else { return false }
            state = .started
            action()
            return true
        }
    }

    /// Runs `action` if the transfer was started; otherwise records the cancellation.
    func cancel(_ action: () -> Void) {
        state.withLock { state in
            switch state {
            case .idle:
                state = .cancelled
            case .started:
                action()
            case .cancelled:
                break
            }
        }
    }
}
