import ReceiptDomain

/// One customer's whole story for support (docs/customer.md): what was asked, Apple's answer for an order id, the
/// user ids it named, and every subscription of theirs with its checks, ledger, notifications and run history.
public struct CustomerStory: Sendable {
    public var query: CustomerQuery
    /// The order's transactions as Apple signed them (verified), for `--order-id`; nil otherwise.
    public var order: [ReceiptTransaction]?
    public var userIds: [String]
    public var subscriptions: [CustomerSubscription]

    public init(
        query: CustomerQuery,
        order: [ReceiptTransaction]?,
        userIds: [String],
        subscriptions: [CustomerSubscription]
    ) {
        self.query = query
        self.order = order
        self.userIds = userIds
        self.subscriptions = subscriptions
    }

    /// Reads the story of `query` from `lookup`; `orderTransactions` asks Apple for an order id's transactions.
    /// - Throws: `CustomerLookupError` `.noSuchCustomer` when nothing in the database matches, the order lookup's
    ///   errors, and the database's.
    public static func read(
        _ query: CustomerQuery,
        from lookup: CustomerLookup,
        orderTransactions: (String) throws -> [ReceiptTransaction]
    ) throws -> CustomerStory {
        var order: [ReceiptTransaction]?
        let userIds: [String]
        if case .orderId(let id) = query {
            let transactions = try orderTransactions(id)
            order = transactions
            let ids = transactions.flatMap { [$0.originalTransactionId, $0.transactionId] }
            userIds = try lookup.userIds(originalTransactionIds: Array(Set(ids)).sorted())
        } else {
            userIds = try lookup.userIds(for: query)
        }
        guard !userIds.isEmpty else {
            let apple = order.map { " (Apple's order names \(Set($0.map(\.originalTransactionId)).sorted()))" } ?? ""
            throw CustomerLookupError(
                .noSuchCustomer,
                "no such customer: no subscription matches \(query.kind) \(query.value)\(apple)"
            )
        }
        return CustomerStory(
            query: query,
            order: order,
            userIds: userIds,
            subscriptions: try lookup.subscriptions(of: userIds)
        )
    }

    public var json: ExplainJSON {
        .object([
            ("query", .object([("kind", .string(query.kind)), ("value", .string(query.value))])),
            ("order", order.map { .array($0.map(Self.orderTransaction)) } ?? .null),
            ("user_ids", .array(userIds.map(ExplainJSON.string))),
            ("subscriptions", .array(subscriptions.map(\.json))),
        ])
    }

    /// A verified transaction of the order: ids, product, dates, price and refund (never the signed payload).
    static func orderTransaction(_ t: ReceiptTransaction) -> ExplainJSON {
        .object([
            ("transaction_id", .string(t.transactionId)),
            ("original_transaction_id", .string(t.originalTransactionId)),
            ("product_id", .string(t.productId)),
            ("purchase_date", .date(t.purchaseDate)),
            ("expires_date", .date(t.expiresDate)),
            ("price_milliunits", t.signedFacts?.priceMilliunits.map(ExplainJSON.integer) ?? .null),
            ("currency", .string(t.signedFacts?.currency)),
            ("storefront", .string(t.signedFacts?.storefront)),
            ("revocation_date", .date(t.cancellationDate)),
            ("revocation_reason", t.cancellationReason.map { .integer(Int64($0)) } ?? .null),
            ("app_account_token", .string(t.appAccountToken)),
        ])
    }
}
