import CivilTime
import Dispatch
import Foundation

/// Shows a run's progress: a live bar on a terminal (done/total, rate, ETA, unresolved), or a plain
/// line every `interval` elsewhere (cron, journald), or nothing (`.quiet`: a healthy nightly run stays
/// a handful of log lines).
public final class ProgressReporter: @unchecked Sendable {
    public enum Style: Sendable {
        case bar
        case lines(interval: Duration)
        case quiet
    }

    /// Picks the bar on a terminal, else `fallback`.
    public static func style(forTerminalOr fallback: Style) -> Style {
        isatty(STDERR_FILENO) == 1 ? .bar : fallback
    }

    private let style: Style
    private let total: Int
    private let alreadyDone: Int
    private let started = ContinuousClock.now
    private let queue = DispatchQueue(label: "renewal-reconciler.progress")
    // Confined to `queue`.
    private var written = 0
    private var unresolved = 0
    private var timer: DispatchSourceTimer?
    private var lastLine = ""

    /// - Parameters:
    ///   - total: items in the run; `alreadyDone`: items finished before (a resumed run).
    public init(style: Style, total: Int, alreadyDone: Int) {
        self.style = style
        self.total = total
        self.alreadyDone = alreadyDone
    }

    public func start() {
        let interval: Duration
        switch style {
        case .quiet: return
        case .bar: interval = .milliseconds(250)
        case .lines(let every): interval = every
        }
        let t = DispatchSource.makeTimerSource(queue: queue)
        let ms = interval.clampedMilliseconds
        t.schedule(deadline: .now() + .milliseconds(ms), repeating: .milliseconds(ms))
        t.setEventHandler { [weak self] in self?.render(final: false) }
        t.resume()
        queue.sync { timer = t }
    }

    public func update(written: Int, unresolved: Int) {
        queue.async {
            self.written = written
            self.unresolved = unresolved
        }
    }

    public func finish() {
        queue.sync {
            timer?.cancel()
            timer = nil
            if case .quiet = style { return }
            render(final: true)
        }
    }

    private func render(final: Bool) {
        let done = alreadyDone + written
        let elapsed = ContinuousClock.now - started
        let seconds = elapsed.seconds
        let rate = seconds > 0 ? Double(written) / seconds : 0
        let remaining = max(0, total - done)
        let eta = rate > 0 ? Self.formatDuration(Double(remaining) / rate) : "--"
        let pct = total > 0 ? Double(done) / Double(total) : 1
        let counts = "\(done)/\(total)  \(String(format: "%.0f", rate))/s  ETA \(eta)  unresolved \(unresolved)"
        switch style {
        case .quiet:
            return
        case .bar:
            let width = 30
            let filled = min(width, Int(pct * Double(width)))
            let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
            let line = "\r[\(bar)] \(String(format: "%3.0f", pct * 100))%  \(counts)\u{1B}[K" + (final ? "\n" : "")
            FileHandle.standardError.write(Data(line.utf8))
        case .lines:
            let line = "progress: \(counts)"
            if line != lastLine || final {
                lastLine = line
                FileHandle.standardError.write(Data((line + "\n").utf8))
            }
        }
    }

    static func formatDuration(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        if s >= 3600 { return "\(s / 3600)h\(String(format: "%02d", (s % 3600) / 60))m" }
        if s >= 60 { return "\(s / 60)m\(String(format: "%02d", s % 60))s" }
        return "\(s)s"
    }
}
