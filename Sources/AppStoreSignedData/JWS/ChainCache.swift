import Synchronization

/// Verified chains, keyed by the JWS header as sent (base64url of `alg` and the `x5c` certificates' bytes),
/// so a run over a million payloads from one chain builds and verifies that chain once, and decodes its
/// header once.
///
/// Bounded: at `capacity` entries the oldest is dropped. Only successes are cached; a refused chain is
/// evaluated again each time (refusals are rare and must stay exact). Thread-safe.
public final class ChainCache: Sendable {
    typealias Key = String

    private struct State {
        var entries: [Key: VerifiedChain] = [:]
        var order: [Key] = []
        var hits = 0
        var misses = 0
    }

    public let capacity: Int
    private let state = Mutex(State())

    public init(capacity: Int = 64) {
        self.capacity = max(1, capacity)
    }

    /// Lookups answered from the cache, and chains verified in full, since creation.
    public var statistics: (hits: Int, misses: Int) {
        state.withLock { ($0.hits, $0.misses) }
    }

    public var count: Int { state.withLock { $0.entries.count } }

    func lookup(_ key: Key) -> VerifiedChain? {
        state.withLock { state in
            if let found = state.entries[key] {
                state.hits += 1
                return found
            }
            state.misses += 1
            return nil
        }
    }

    func insert(_ chain: VerifiedChain, for key: Key) {
        state.withLock { state in
            if state.entries.updateValue(chain, forKey: key) == nil {
                state.order.append(key)
            }
            while state.order.count > capacity {
                let oldest = state.order.removeFirst()
                state.entries[oldest] = nil
            }
        }
    }
}
