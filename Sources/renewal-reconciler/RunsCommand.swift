import ArgumentParser
import Foundation
import Postgres
import Reconciler

struct RunsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "runs",
        abstract: "List recent runs with their status and headline counts."
    )

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var logging: LoggingOptions

    @Option(help: "How many runs to list (newest first).")
    var limit: Int = 20

    func validate() throws {
        try SettingBounds.runsLimit.validate(limit, flag: "--limit")
    }

    func run() throws {
        logging.bootstrap()
        try runReportingErrors {
            let conn = try database.migratedConnection()
            defer { conn.close() }
            let rows = try RunListing(connection: conn).recent(limit: limit)
            print(rows.isEmpty ? "no runs yet" : RunListing.format(rows), terminator: rows.isEmpty ? "\n" : "")
            for line in try WorkerListing(connection: conn).lines(runIds: rows.map(\.id)) { print(line) }
        }
    }
}
