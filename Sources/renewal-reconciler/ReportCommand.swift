import ArgumentParser
import Foundation
import Postgres
import Reconciler

struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "(Re)generate a run's report folder from the database.",
        discussion: """
            Writes <report-dir>/<YYYY-MM-DD>_run-<id>/ (summary.json, changes.csv, transactions.csv, errors.csv, \
            report.html) from the run's rows in PostgreSQL, replacing an existing folder atomically. Use it when \
            the report directory was not writable during the run, or to rebuild an old report.
            """
    )

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var logging: LoggingOptions
    @OptionGroup var money: MoneyReportOptions

    @Argument(help: "The run's id (see `renewal-reconciler runs`).")
    var runId: Int64

    @Option(help: ArgumentHelp("Write the report under this directory.", valueName: "dir"))
    var reportDir: String = "./reports"

    @Option(help: ArgumentHelp("Also (re)write the Prometheus metrics file for this run.", valueName: "path"))
    var metricsFile: String?

    func run() throws {
        logging.bootstrap()
        try runReportingErrors {
            // A bad rates file is exit 64 before anything is read.
            let moneyOptions = try money.moneyOptions()
            let conn = try PostgresConnection(try database.connectionString())
            defer { conn.close() }
            let folder = try ReportGenerator(connection: conn, moneyOptions: moneyOptions).generate(
                runId: runId,
                reportDirectory: reportDir,
                metricsFile: metricsFile
            )
            print(folder.path)
        }
    }
}
