import AppStoreClient
import Foundation

/// What the pipeline gives each item's attempt plan when it starts it: the run's `AttemptPolicy` (from
/// `RunOptions`) and the wall clock `Retry-After` is measured on (the pipeline's clock, virtual in tests).
public struct AttemptContext: Sendable {
    public let policy: AttemptPolicy
    public let date: @Sendable () -> Date

    public init(policy: AttemptPolicy, date: @escaping @Sendable () -> Date = { Date() }) {
        self.policy = policy
        self.date = date
    }

    /// The run's policy with a source's own attempt budget.
    public func policy(maxAttempts: Int) -> AttemptPolicy {
        var policy = policy
        policy.maxAttempts = max(1, maxAttempts)
        return policy
    }
}
