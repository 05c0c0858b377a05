/// How a report estimates and converts money, from the command line (`--small-business`, `--commission-rate`,
/// `--fx-rates`; docs/reports.md, "Estimated proceeds", "Converted totals"). Not stored with the run: regenerate a report with the same flags to
/// get the same figures.
public struct ReportMoneyOptions: Sendable, Equatable {
    /// The commission of estimated proceeds.
    public var commission: CommissionPolicy
    /// The user's exchange rates for a converted total; nil: no conversion.
    public var fxRates: FXRates?
    /// Apple's measured proceeds rates, loaded with the report's data (`ProceedsCalibration.load`); `.none` until
    /// then, and always with a configured `--commission-rate`.
    public var calibration = ProceedsCalibration.none

    /// How estimated proceeds are computed: the calibration where it knows the rate, else the commission.
    public var estimate: ProceedsEstimate { ProceedsEstimate(commission: commission, calibration: calibration) }

    public init(commission: CommissionPolicy = .standard, fxRates: FXRates? = nil) {
        self.commission = commission
        self.fxRates = fxRates
    }
}
