import ArgumentParser
import Reconciler

/// How the report estimates proceeds (docs/reports.md, "Estimated proceeds"): flags of `run`, `backfill`,
/// `report` and `demo`.
struct MoneyReportOptions: ParsableArguments {
    @Flag(
        help: ArgumentHelp(
            "Estimate proceeds at the Small Business Program's 15% commission for every transaction (default: 30% "
                + "in a subscriber's first year of paid service, 15% after it)."
        )
    )
    var smallBusiness = false

    @Option(
        help: ArgumentHelp(
            "Estimate proceeds at this commission (a percentage, e.g. 15 or 17.5) for every transaction.",
            valueName: "percent"
        )
    )
    var commissionRate: String?

    func validate() throws {
        if smallBusiness && commissionRate != nil {
            throw ValidationError("--small-business and --commission-rate cannot be used together")
        }
        if let commissionRate, CommissionPolicy.parseRate(commissionRate) == nil {
            throw ValidationError(
                "--commission-rate must be a percentage from 0 to 100 with at most 3 decimals, got \(commissionRate)"
            )
        }
    }

    /// The options the report uses.
    func moneyOptions() throws -> ReportMoneyOptions {
        if smallBusiness { return ReportMoneyOptions(commission: .smallBusiness) }
        if let rate = commissionRate.flatMap(CommissionPolicy.parseRate) {
            return ReportMoneyOptions(commission: .fixed(rate))
        }
        return ReportMoneyOptions()
    }
}
