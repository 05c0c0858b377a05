import Dispatch
import Foundation

/// Turns SIGINT/SIGTERM into a graceful stop: the first signal calls `handler` (the run stops taking new
/// work, finishes and writes what is in flight, and stays resumable); a second one exits at once with
/// 128+signal (nothing half-written: every batch is one transaction).
public final class SignalTrap: @unchecked Sendable {
    private let sources: [DispatchSource]
    private let queue = DispatchQueue(label: "renewal-reconciler.signals")

    public init(_ handler: @escaping @Sendable (String) -> Void) {
        let fired = LockedFlag()
        var made: [DispatchSource] = []
        for (number, name) in [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM")] {
            signal(number, SIG_IGN)
            // `any DispatchSourceSignal` is not Sendable; DispatchSource is.
            guard let source = DispatchSource.makeSignalSource(signal: number, queue: queue) as? DispatchSource else {
                continue
            }
            source.setEventHandler { @Sendable in
                if fired.isSet {
                    FileHandle.standardError.write(Data("\(name) again: exiting now\n".utf8))
                    exit(128 + number)
                }
                fired.set()
                handler(name)
            }
            source.resume()
            made.append(source)
        }
        sources = made
    }

    /// Restores the default signal behaviour.
    public func cancel() {
        for source in sources { source.cancel() }
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }
}
