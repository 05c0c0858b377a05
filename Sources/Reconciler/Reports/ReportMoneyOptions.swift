/// How a report estimates and converts money, from the command line (`--small-business`, `--commission-rate`;
/// docs/reports.md, "Estimated proceeds"). Not stored with the run: regenerate a report with the same flags to
/// get the same figures.
public struct ReportMoneyOptions: Sendable, Equatable {
    /// The commission of estimated proceeds.
    public var commission: CommissionPolicy

    public init(commission: CommissionPolicy = .standard) {
        self.commission = commission
    }
}
