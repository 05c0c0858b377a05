/// Why a ledger figure and Apple's differ, one name per rule of docs/tie-out.md ("Causes").
public enum TieOutCause: String, Sendable, CaseIterable, Codable, Comparable {
    /// Both sides hold the money on the same day (or fiscal month), within a minor unit per event.
    case matched
    /// The money is on the neighbouring Pacific day or fiscal month on the other side.
    case timing
    /// A refund one side books on another day than the other, more than a day away (another period).
    case refundOtherPeriod = "refund_other_period"
    /// A refund in Apple's report that Apple later reversed (`REFUND_REVERSED`): the ledger holds the purchase
    /// unrefunded.
    case refundReversed = "refund_reversed"
    /// Apple pays the proceeds in another currency than the customer's.
    case exchangeRate = "exchange_rate"
    /// Apple's proceeds below price less commission: the storefront's tax.
    case tax
    /// A family member's access (`FAMILY_SHARED`) that Apple does not bill.
    case familySharing = "family_sharing"
    /// Apple's commission rate is not the one the ledger's estimate used (85% after a year, Small Business Program).
    case commissionTier = "commission_tier"
    /// Nothing explains it: a lost order, ledger money Apple never reported, or Apple's reports disagreeing.
    case unexplained

    public static func < (lhs: TieOutCause, rhs: TieOutCause) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}
