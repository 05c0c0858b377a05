import ArgumentParser
import Foundation
import Postgres
import Reconciler

struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "(Re)generate a run's report folder, or the trends across nights, from the database.",
        discussion: """
            Writes <report-dir>/<YYYY-MM-DD>_run-<id>/ (summary.json, changes.csv, transactions.csv, errors.csv, \
            report.html) from the run's rows in PostgreSQL, replacing an existing folder atomically. Use it when \
            the report directory was not writable during the run, or to rebuild an old report.

            With --trends (and no RUN_ID): writes trends.csv and trends.html of the last --days days of daily \
            snapshots into --out (default: --report-dir); with --rebuild, first recomputes the snapshots of those \
            days from the runs and the ledger (after an import, or for days before the snapshots existed). \
            See docs/reports.md, "Trends across nights".
            """
    )

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var logging: LoggingOptions
    @OptionGroup var money: MoneyReportOptions

    @Argument(help: "The run's id (see `renewal-reconciler runs`); not with --trends.")
    var runId: Int64?

    @Flag(help: "Write trends.csv and trends.html (daily snapshots across nights) instead of a run's folder.")
    var trends = false

    @Option(help: ArgumentHelp("With --trends: the days covered, ending on the newest snapshot.", valueName: "n"))
    var days: Int = TrendsReport.defaultDays

    @Option(help: ArgumentHelp("With --trends: write the files here (default: --report-dir).", valueName: "dir"))
    var out: String?

    @Flag(help: "With --trends: recompute the snapshots of those days from the runs and the ledger first.")
    var rebuild = false

    @Option(help: ArgumentHelp("Write the report under this directory.", valueName: "dir"))
    var reportDir: String = "./reports"

    @Option(help: ArgumentHelp("Also (re)write the Prometheus metrics file for this run.", valueName: "path"))
    var metricsFile: String?

    func validate() throws {
        if trends {
            guard runId == nil else { throw ValidationError("--trends takes no RUN_ID") }
            try SettingBounds.trendDays.validate(days, flag: "--days")
            guard metricsFile == nil else {
                throw ValidationError("--metrics-file is for a run's report, not --trends")
            }
        } else {
            guard runId != nil else { throw ValidationError("give a RUN_ID, or --trends") }
            guard !rebuild, out == nil else { throw ValidationError("--rebuild and --out go with --trends") }
        }
    }

    func run() throws {
        logging.bootstrap()
        try runReportingErrors {
            // A bad rates file is exit 64 before anything is read.
            let moneyOptions = try money.moneyOptions()
            let conn = try database.migratedConnection()
            defer { conn.close() }
            guard let runId else {
                if rebuild, let range = try TrendSnapshotWriter(connection: conn).range(days: days) {
                    let rebuilt = try TrendSnapshotWriter(connection: conn).rebuild(from: range.from, to: range.to)
                    FileHandle.standardError.write(
                        Data("rebuilt \(rebuilt.count) day(s) from \(range.from) to \(range.to)\n".utf8)
                    )
                }
                let directory = out ?? reportDir
                try TrendsReport(connection: conn).write(directory: directory, days: days)
                print("\(directory)/\(TrendsReport.htmlName)")
                return
            }
            let folder = try ReportGenerator(connection: conn, moneyOptions: moneyOptions).generate(
                runId: runId,
                reportDirectory: reportDir,
                metricsFile: metricsFile
            )
            print(folder.path)
        }
    }
}
