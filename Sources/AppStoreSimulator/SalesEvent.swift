/// One subscription transaction event of the simulated world as App Store Connect's reports see it (docs/simulator.md,
/// "App Store Connect reports"): a purchase (first or renewal, a free trial's included) or a refund, with its customer
/// price and proceeds signed (negative for a refund) in the storefront's currency.
struct SalesEvent: Sendable {
    enum Kind: Sendable, Equatable {
        case purchase, refund
    }

    var kind: Kind
    /// The purchase instant, or the refund's.
    var at: Int64
    var transaction: SimTransaction
    var storefront: Storefront
    /// The customer's price in milliunits, negative for a refund (the refunded amount, prorated or full).
    var customerPrice: Int64
    /// Apple's proceeds in milliunits, negative for a refund.
    var proceeds: Int64
    /// Sold after a year of paid service: 15% commission ("Rate After One Year").
    var afterOneYear: Bool
    /// The anonymised subscriber (one per customer), as the Subscriber report's `Subscriber ID`.
    var subscriberId: String
    /// A sale of a customer the app's database never heard of (`Population.lostOrders`).
    var lostOrder = false

    /// 1, or -1 for a refund.
    var units: Int { kind == .refund ? -1 : 1 }

    /// The Pacific day Apple settles it on (the detailed Financial report's `Settlement Date`): 0 to 3 days after
    /// the event's Pacific day, by the transaction.
    func settlementDay(seed: UInt64) -> ReportDay {
        let lag = SeededRandom.hash(seed, 0x5E77, transaction.transactionId, kind == .refund ? 1 : 0) % 4
        return ReportDay.containing(at).adding(Int64(lag))
    }
}
