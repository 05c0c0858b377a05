import Foundation

/// Blocking work the tests cannot make asynchronous (a library call that waits inside, such as starting the
/// simulator or a PostgreSQL cluster), run on a thread of its own and awaited, so it never holds one of the
/// cooperative pool's threads (docs/testing.md, "One command").
public enum OffPool {
    public static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let thread = Thread { continuation.resume(with: Result { try work() }) }
            thread.start()
        }
    }
}
