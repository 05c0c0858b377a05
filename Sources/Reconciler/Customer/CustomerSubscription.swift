/// One subscription of a customer, everything the database holds about it (docs/customer.md): the app's row as
/// stored, its `subscription_checks` row, its ledger, the notifications naming it, what each run's item recorded for
/// it, and its events.
public struct CustomerSubscription: Sendable, Equatable {
    /// The `subscriptions` row (the receipt and signed payloads left out: their lengths instead).
    public var row: CustomerRecord
    /// The `subscription_checks` row: the last verification; nil before the first.
    public var checks: CustomerRecord?
    /// `subscription_transactions`, oldest purchase first: price, currency, refunds and revocations.
    public var transactions: [CustomerRecord]
    /// `app_store_notifications` naming the subscription's original transaction id, oldest first.
    public var notifications: [CustomerRecord]
    /// `reconciliation_items` of every run that selected the subscription, oldest run first.
    public var history: [CustomerRecord]
    /// `subscription_events`: each change the reconciler wrote, in order (docs/events.md).
    public var events: [CustomerRecord]

    public var originalTransactionId: String { row.text("original_transaction_id") }

    public var json: ExplainJSON {
        .object([
            ("subscription", row.json),
            ("checks", checks?.json ?? .null),
            ("transactions", .array(transactions.map(\.json))),
            ("notifications", .array(notifications.map(\.json))),
            ("history", .array(history.map(\.json))),
            ("events", .array(events.map(\.json))),
        ])
    }
}
