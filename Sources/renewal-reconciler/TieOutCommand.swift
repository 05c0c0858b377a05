import AppleReports
import ArgumentParser
import Foundation
import Postgres
import Reconciler

/// `renewal-reconciler tie-out`: the ledger against Apple's imported reports, every difference attributed to a cause
/// (docs/tie-out.md).
struct TieOutCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tie-out",
        abstract: "Compare the ledger with Apple's imported reports; every difference gets a cause.",
        discussion: """
            Reads the ledger (subscription_transactions) and Apple's reports imported with `apple-reports import` \
            or `apple-reports download`, and writes tieout.csv, tieout.json and tieout.html into --out. Per Pacific \
            day, product, country and currency it compares units, customer prices, refunds and proceeds with the \
            Subscriber report; per fiscal month (each one wholly inside the days, whose Financial report is \
            imported) the ledger's estimated proceeds with the Financial report's partner share. Every difference \
            is attributed to a cause: timing, refund_other_period, refund_reversed, exchange_rate, tax, family_sharing, \
            commission_tier or unexplained; the unexplained money is listed event by event (lost orders to \
            backfill, and ledger transactions Apple never reported). The rules: docs/tie-out.md.

            Exit status: 0 the tie-out was written (unexplained money included: read the headline); 64 bad \
            arguments; 78 no database, a schema without the needed migrations, or an --out that cannot be \
            written; 1 the database failed.
            """
    )

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var logging: LoggingOptions

    @Option(
        help: ArgumentHelp(
            "The Apple fiscal month, named as App Store Connect names it (2026-10: 27 September to 31 October 2026).",
            valueName: "YYYY-MM"
        )
    )
    var fiscalMonth: String?

    @Option(help: ArgumentHelp("The first Pacific day compared (with --to).", valueName: "YYYY-MM-DD"))
    var from: String?

    @Option(help: ArgumentHelp("The last Pacific day compared (with --from).", valueName: "YYYY-MM-DD"))
    var to: String?

    @Option(help: ArgumentHelp("Write the files here (default: ./reports/tieout_<period>).", valueName: "dir"))
    var out: String?

    @Option(
        help: ArgumentHelp(
            "Only the ledger of this app's subscriptions, and Apple's rows of the products that ledger holds.",
            valueName: "id"
        )
    )
    var bundleId: String?

    @Flag(
        help: ArgumentHelp(
            "Estimate the ledger's proceeds at the Small Business Program's 15% commission (default: 30% in a "
                + "subscriber's first year of paid service, 15% after it)."
        )
    )
    var smallBusiness = false

    /// The longest range compared at once.
    static let maxDays: Int64 = 400

    /// The days and the fiscal month asked for.
    func days() throws -> (from: PacificDay, to: PacificDay, month: AppleFiscalMonth?) {
        if let fiscalMonth {
            guard from == nil, to == nil else { throw ValidationError("give --fiscal-month or --from/--to, not both") }
            guard let month = AppleFiscalMonth(named: fiscalMonth) else {
                throw ValidationError("--fiscal-month: \(fiscalMonth.debugDescription) is not a month like 2026-10")
            }
            return (month.start, month.end, month)
        }
        guard let from, let to else { throw ValidationError("give --fiscal-month YYYY-MM, or --from and --to") }
        guard let first = PacificDay(from) else {
            throw ValidationError("--from: \(from.debugDescription) is not a day like 2026-11-01")
        }
        guard let last = PacificDay(to) else {
            throw ValidationError("--to: \(to.debugDescription) is not a day like 2026-11-30")
        }
        guard first <= last else { throw ValidationError("--from \(from) is after --to \(to)") }
        guard last.days - first.days < Self.maxDays else {
            throw ValidationError("--from to --to spans more than \(Self.maxDays) days: tie out a shorter range")
        }
        return (first, last, nil)
    }

    func validate() throws {
        _ = try days()
        if let bundleId, bundleId.isEmpty { throw ValidationError("--bundle-id must not be empty") }
    }

    func run() throws {
        logging.bootstrap()
        try runReportingErrors {
            let (first, last, month) = try days()
            let conn = try database.migratedConnection()
            defer { conn.close() }
            let loader = TieOutLoader(
                connection: conn,
                commission: smallBusiness ? .smallBusiness : .standard,
                bundleId: bundleId
            )
            let (input, notes) = try loader.load(from: first, to: last)
            let result = TieOutComparison.compare(input, fiscalMonth: month, notes: notes)
            let directory = out ?? "./reports/tieout_\(result.periodLabel)"
            try TieOutReport.write(result, directory: directory)
            for line in Self.headline(result) { print(line) }
            print("\(directory)/\(TieOutReport.htmlName)")
        }
    }

    /// The headline on stdout: the period, each currency's matched and explained share, the unexplained events.
    static func headline(_ result: TieOutResult) -> [String] {
        var lines = ["tie-out \(result.periodText)"]
        if result.headline.isEmpty { lines.append("  no money on either side") }
        for line in result.headline {
            lines.append(
                "  \(line.currency): \(TieOutCurrencyHeadline.percent(line.matchedShare)) of money matched, "
                    + "\(TieOutCurrencyHeadline.percent(line.explainedShare)) explained"
            )
        }
        lines.append(
            "  unexplained: \(result.appleOnly.count) lost order(s) (Apple only), \(result.ledgerOnly.count) ledger-only "
                + "event(s), \(result.unexplainedRows.count) row(s) in all"
        )
        for note in result.notes { lines.append("  note: \(note)") }
        return lines
    }
}
