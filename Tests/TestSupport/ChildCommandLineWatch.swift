import Foundation
import Synchronization

/// Reads the command line (what `ps` shows) of a child of this process from `/proc`, on a thread of its own started
/// before the child is spawned: a child that lives a few milliseconds is seen even while the tests keep every
/// thread of the cooperative pool busy (a task polling after the spawn could resume only once the child was gone).
public final class ChildCommandLineWatch: Sendable {
    private struct State {
        var seen: String?
        var stopped = false
    }
    private let state = Mutex(State())

    /// Watches for a child whose command line begins with `prefix` (the executable, then arguments).
    public init(prefix: [String]) {
        let wanted = prefix.joined(separator: "\0") + "\0"
        let thread = Thread { [self] in
            while !self.state.withLock({ $0.stopped || $0.seen != nil }) {
                if let found = Self.children().lazy.compactMap(Self.commandLine).first(where: { $0.hasPrefix(wanted) })
                {
                    self.state.withLock { $0.seen = found.replacingOccurrences(of: "\0", with: " ") }
                }
                usleep(500)
            }
        }
        thread.start()
    }

    /// The command line seen (arguments separated by spaces), or nil so far.
    public var commandLine: String? { state.withLock { $0.seen } }

    /// Ends the watch (the thread returns within a millisecond).
    public func stop() { state.withLock { $0.stopped = true } }

    /// The process ids of this process's children (every thread's).
    private static func children() -> [Int32] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.flatMap { task in
            ((try? String(contentsOfFile: "/proc/self/task/\(task)/children", encoding: .utf8)) ?? "")
                .split(separator: " ").compactMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
    }

    private static func commandLine(_ pid: Int32) -> String? {
        try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)
    }
}
