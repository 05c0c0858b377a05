import ArgumentParser
import Reconciler

/// How the report estimates proceeds and converts money (docs/reports.md, "Estimated proceeds", "Converted
/// totals"): flags of `run`, `backfill`, `report` and `demo`.
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

    @Option(
        help: ArgumentHelp(
            "Also convert the period's money into one reporting currency with the exchange rates of this CSV file "
                + "(lines `CODE,RATE`: RATE units of the reporting currency per unit of CODE; see docs/reports.md).",
            valueName: "file"
        )
    )
    var fxRates: String?

    @Option(
        help: ArgumentHelp(
            "The reporting currency of --fx-rates, when the file has no `reporting_currency,CODE` line.",
            valueName: "code"
        )
    )
    var reportingCurrency: String?

    func validate() throws {
        if reportingCurrency != nil && fxRates == nil {
            throw ValidationError("--reporting-currency needs --fx-rates FILE")
        }
        if smallBusiness && commissionRate != nil {
            throw ValidationError("--small-business and --commission-rate cannot be used together")
        }
        if let commissionRate, CommissionPolicy.parseRate(commissionRate) == nil {
            throw ValidationError(
                "--commission-rate must be a percentage from 0 to 100 with at most 3 decimals, got \(commissionRate)"
            )
        }
    }

    /// The options the report uses; reads the rates file.
    /// - Throws: `UsageError` (exit 64) for a rates file that cannot be read or is malformed, naming the line.
    func moneyOptions() throws -> ReportMoneyOptions {
        var options = ReportMoneyOptions()
        if smallBusiness {
            options.commission = .smallBusiness
        } else if let rate = commissionRate.flatMap(CommissionPolicy.parseRate) {
            options.commission = .fixed(rate)
        }
        if let fxRates {
            options.fxRates = try FXRates.load(path: fxRates, reportingCurrency: reportingCurrency)
        }
        return options
    }
}
