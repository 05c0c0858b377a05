import AppStoreClient
import Foundation
import ReceiptDomain

/// What the pipeline gives each item's attempt plan when it starts it: the run's `AttemptPolicy` (from
/// `RunOptions`) and the wall clock `Retry-After` is measured on (the pipeline's clock, virtual in tests).
public struct AttemptContext: Sendable {
    public let policy: AttemptPolicy
    public let date: @Sendable () -> Date

    public init(policy: AttemptPolicy, date: @escaping @Sendable () -> Date = { Date() }) {
        self.policy = policy
        self.date = date
    }

    /// The default policy on the system clock (a verification not started by a pipeline).
    public static let standard = AttemptContext(policy: AttemptPolicy())

    /// An item's plan: the run's policy with its source's attempt budget, from the row's known environment
    /// (else production).
    public func plan(maxAttempts: Int, startingIn environment: AppleEnvironment?) -> AttemptPlan {
        var policy = policy
        policy.maxAttempts = max(1, maxAttempts)
        return AttemptPlan(policy: policy, startingEnvironment: environment ?? .production)
    }
}
