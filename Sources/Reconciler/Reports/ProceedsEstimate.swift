/// How the reports estimate what Apple pays for a ledger transaction (docs/reports.md, "Estimated proceeds",
/// "Calibrated proceeds"): Apple's measured rate of the transaction's storefront, currency and commission tier where
/// the imported Subscriber reports give one (`ProceedsCalibration`: tax and commission together), else the price less
/// the commission (`CommissionPolicy`). A configured rate (`--commission-rate`) is never calibrated: it is what the
/// user asked for.
public struct ProceedsEstimate: Sendable, Equatable {
    public var commission: CommissionPolicy
    public var calibration: ProceedsCalibration

    public init(commission: CommissionPolicy, calibration: ProceedsCalibration = .none) {
        self.commission = commission
        self.calibration = commission.isConfigured ? .none : calibration
    }

    /// The proceeds of `amount` (milliunits, positive) of `currency` sold in `storefront` (alpha-3, or nil) at the
    /// tier `afterFirstYear`, and whether Apple's measured rate priced it.
    public func proceeds(
        of amount: Int64,
        currency: String,
        storefront: String?,
        afterFirstYear: Bool
    ) -> (milliunits: Int64, calibrated: Bool) {
        if let measured = calibration.proceeds(
            of: amount,
            currency: currency,
            storefront: storefront,
            afterFirstYear: afterFirstYear
        ) {
            return (measured, true)
        }
        let rate = afterFirstYear ? commission.afterFirstYearRate : commission.firstYearRate
        return (CommissionPolicy.proceeds(of: amount, rate: rate, currency: currency), false)
    }
}
