/// An offer on one subscription transaction, as the App Store Server API reports it (`offerType`,
/// `offerIdentifier`, `offerDiscountType`, `offerPeriod`; docs/simulator.md, "Offers").
///
/// `type` is Apple's `offerType`: 1 introductory, 2 promotional, 3 offer code, 4 win-back. `period` is the offer's
/// whole duration as ISO 8601 (`P1M`, `P3M`, `P7D`), as Apple's API 1.15 reports it.
public struct SubscriptionOffer: Sendable, Equatable {
    public var type: Int
    public var identifier: String?
    /// `FREE_TRIAL` (price 0) or `PAY_AS_YOU_GO` (a discounted price each period).
    public var discountType: String
    public var period: String

    public static let freeTrial = "FREE_TRIAL"
    public static let payAsYouGo = "PAY_AS_YOU_GO"

    /// The `offer` value of `ledger.jsonl` (unchanged since before offer types were reported).
    public var ledgerName: String { discountType == Self.freeTrial ? "free_trial" : "pay_as_you_go" }

    /// ISO 8601 duration of `periods` periods of `product` (`P1W`, `P3M`, `P1Y`).
    static func duration(_ product: SimProduct, periods: Int) -> String {
        switch product.period {
        case .week: return "P\(periods)W"
        case .month: return "P\(periods)M"
        case .year: return "P\(periods)Y"
        }
    }
}
