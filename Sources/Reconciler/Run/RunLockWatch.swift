import Dispatch
import Foundation
import Postgres
import Synchronization

/// Keeps the run lock's connection confirmed (docs/architecture.md, "The run lock"): every half second, on the
/// queue that owns the connection, a `SELECT 1` on it. A connection the server dropped (a restart, a failover) is
/// re-established by that statement and the lock taken again; if another process took the lock meanwhile, the
/// lock is lost for good. The pipeline asks it before every send window (`SendGate`): it sends only while the
/// lock was confirmed within `staleAfter`, holds its sends while the database cannot be reached, and stops at
/// once when the lock is lost. Writes are fenced separately, in each batch's transaction (`RunStore`).
final class RunLockWatch: SendGate, @unchecked Sendable {
    private enum State {
        case confirmed(at: UInt64)
        case lost(String)
    }

    private let connection: PostgresConnection
    private let queue: DispatchQueue
    private let interval: DispatchTimeInterval
    private let staleAfterNanoseconds: UInt64
    private let onLost: @Sendable (String) -> Void
    private let state: Mutex<State>
    /// Set once in `start`, cancelled in `cancel`; the source is only touched from the caller's thread.
    private var timer: DispatchSourceTimer?

    /// - Parameters:
    ///   - connection: the connection holding the run lock; used only from `queue` from now on.
    ///   - onLost: called once, on `queue`, with the reason, when another process holds the lock.
    init(
        connection: PostgresConnection,
        queue: DispatchQueue,
        interval: DispatchTimeInterval = .milliseconds(500),
        staleAfterSeconds: Double = 2,
        onLost: @escaping @Sendable (String) -> Void
    ) {
        self.connection = connection
        self.queue = queue
        self.interval = interval
        self.staleAfterNanoseconds = UInt64(staleAfterSeconds * 1e9)
        self.onLost = onLost
        self.state = Mutex(.confirmed(at: MonotonicClock.now()))
    }

    func start() {
        let source = DispatchSource.makeTimerSource(queue: queue)
        source.schedule(deadline: .now() + interval, repeating: interval)
        source.setEventHandler { [weak self] in self?.confirm() }
        timer = source
        source.resume()
    }

    func cancel() {
        timer?.cancel()
        timer = nil
    }

    /// The lock's state as last seen; never waits for the database.
    func sendPermission() -> SendPermission {
        state.withLock { state in
            switch state {
            case .lost(let why): return .lost(why)
            case .confirmed(let at):
                return MonotonicClock.now() &- at <= staleAfterNanoseconds ? .go : .wait
            }
        }
    }

    /// Whether the lock was lost (for the heartbeat and the finish, which must not write then).
    var isLost: Bool {
        if case .lost = sendPermission() { return true }
        return false
    }

    /// One check, on `queue` (the timer's, or a caller's `queue.sync`).
    func confirm() {
        guard !isLost else { return }
        // A failure other than the lost lock: the database cannot be reached (restarting, failing over), and sends
        // hold until it answers again.
        _ = try? withConnection { try $0.execute("SELECT 1") }
    }

    /// Every other use of the lock's connection (the heartbeats), on `queue`: a statement that reconnects re-takes
    /// the lock, and one that finds it taken makes it lost here too, so no caller sees the loss without the send
    /// gate closing. A statement that succeeds confirms the lock.
    func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        do {
            let result = try body(connection)
            state.withLock { state in
                if case .confirmed = state { state = .confirmed(at: MonotonicClock.now()) }
            }
            return result
        } catch let error as PostgresError where error.code == .advisoryLockLost {
            let why = "lost the run lock after a database reconnect: another process holds it"
            let first = state.withLock { state -> Bool in
                if case .lost = state { return false }
                state = .lost(why)
                return true
            }
            if first { onLost(why) }
            throw error
        }
    }
}
