/// One subscription group in Get All Subscription Statuses.
public struct SubscriptionGroupIdentifierItem: Decodable, Sendable, Equatable {
    public var subscriptionGroupIdentifier: String?
    public var lastTransactions: [LastTransactionsItem]

    public init(subscriptionGroupIdentifier: String?, lastTransactions: [LastTransactionsItem]) {
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.lastTransactions = lastTransactions
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        subscriptionGroupIdentifier = try c.string("subscriptionGroupIdentifier")
        lastTransactions = try c.value([LastTransactionsItem].self, "lastTransactions") ?? []
    }
}
