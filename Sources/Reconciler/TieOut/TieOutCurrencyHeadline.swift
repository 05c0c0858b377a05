/// The headline of one currency in the daily view (docs/tie-out.md, "The headline"): customer price money on both
/// sides, the money matched on the same day, and the money nothing explains.
public struct TieOutCurrencyHeadline: Sendable, Equatable {
    public var currency: String
    /// Sum of the absolute customer amounts of the ledger's events in the window.
    public var ledgerMoney: Int64 = 0
    /// The same for the Subscriber report's events.
    public var appleMoney: Int64 = 0
    /// The absolute amounts of both sides' events matched on the same day.
    public var matchedMoney: Int64 = 0
    /// The absolute amounts of both sides' events nothing explains (lost orders, ledger-only transactions).
    public var unexplainedMoney: Int64 = 0

    public init(currency: String) {
        self.currency = currency
    }

    /// Matched money over both sides' money, 1 when there is none.
    public var matchedShare: Double { share(matchedMoney) }
    /// Money a cause explains (matched included) over both sides' money.
    public var explainedShare: Double { share(ledgerMoney + appleMoney - unexplainedMoney) }

    private func share(_ part: Int64) -> Double {
        let total = ledgerMoney + appleMoney
        return total == 0 ? 1 : Double(part) / Double(total)
    }

    /// `97.5%`: a share as a percentage with one decimal, rounded down so an imperfect tie-out never shows 100%.
    public static func percent(_ share: Double) -> String {
        let tenths = Int((share * 1000).rounded(.down))
        return "\(tenths / 10).\(tenths % 10)%"
    }
}
