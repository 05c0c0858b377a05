import Synchronization

/// A value computed once, on first use, by an async body, and awaited by every test that needs it (the reference
/// run several parameterized tests compare with): the asynchronous form of a lazy `static let` of `Result`.
public final class SharedResult<Value: Sendable>: Sendable {
    private let make: @Sendable () async throws -> Value
    private let task = Mutex<Task<Value, any Error>?>(nil)

    public init(_ make: @escaping @Sendable () async throws -> Value) {
        self.make = make
    }

    /// The value, or the error its computation threw; computed by the first caller, awaited by the others.
    public func get() async throws -> Value {
        let running = task.withLock { current in
            if let current { return current }
            let started = Task { try await make() }
            current = started
            return started
        }
        return try await running.value
    }
}
