/// A one-time purchase (consumable or non-consumable) of a customer (docs/simulator.md, "One-time purchases"): its
/// own transaction id (also its original transaction id), never a subscription's and never in `purchases.jsonl`.
/// Apple sends ONE_TIME_CHARGE when it is bought, and REFUND (after a CONSUMPTION_REQUEST, for some) when refunded.
public struct OneTimePurchase: Sendable {
    public enum Kind: String, Sendable {
        case consumable = "Consumable"
        case nonConsumable = "Non-Consumable"
    }

    public var transactionId: UInt64
    public var familyIndex: Int
    public var kind: Kind
    public var productId: String
    public var purchase: Int64
    /// Refunded in full at this instant (REFUND_FULL, `revocationReason` 0).
    public var refundedAt: Int64?
    /// Apple asked about the refund request first (CONSUMPTION_REQUEST) at this instant.
    public var refundRequestedAt: Int64?

    /// The customer price in the storefront's currency (milliunits): a consumable costs the weekly price, a
    /// non-consumable the top-tier monthly price.
    public func price(in storefront: Storefront) -> Int64 {
        kind == .consumable ? storefront.prices.week : storefront.prices.plusMonth
    }

    /// Refunded at `now`.
    public func isRefunded(at now: Int64) -> Bool { refundedAt.map { $0 <= now } ?? false }
}
