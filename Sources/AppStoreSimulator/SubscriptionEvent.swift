/// One event of the Subscription Event report (docs/simulator.md, "Subscription Event report"): a subscription's
/// start, renewal, conversion, plan change, reactivation, refund, cancellation or billing problem, on an instant of the
/// simulated world.
struct SubscriptionEvent: Sendable {
    /// Apple's event name (`Subscribe`, `Renew`, `Refund`, `Cancel`, ...).
    var name: String
    /// The instant it happened.
    var at: Int64
    /// The transaction it is about (for a cancellation or billing problem: the subscription's last one).
    var transaction: SimTransaction
    /// For an upgrade, downgrade or crossgrade: the transaction before it (its product is the previous subscription).
    var previous: SimTransaction?
    var storefront: Storefront
    /// Whether the transaction pays Apple's 15% commission ("Rate After One Year").
    var afterOneYear: Bool
    /// Paid periods in a row up to the transaction (0 for a free trial).
    var consecutivePaidPeriods: Int
    var cancellationReason: String?
    var daysBeforeCanceling: Int?
    /// For a reactivation: the days between the lapse and the return.
    var daysCanceled: Int?
}
