import ReceiptDomain

/// One request a source asks the pipeline to send.
public struct SourceRequest: Sendable, Equatable {
    /// The Apple rate limit it spends.
    public let budget: RateBudget
    /// The environment it goes to, when the source has environments (recorded on the item).
    public let environment: AppleEnvironment?
    /// True when it resends to the other environment after Apple said so (counted in the run's stats).
    public let switchesEnvironment: Bool

    public init(budget: RateBudget, environment: AppleEnvironment?, switchesEnvironment: Bool = false) {
        self.budget = budget
        self.environment = environment
        self.switchesEnvironment = switchesEnvironment
    }
}
