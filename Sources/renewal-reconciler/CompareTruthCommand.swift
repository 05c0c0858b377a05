import ArgumentParser
import Foundation
import Postgres
import Reconciler
import ReconcilerDemo

/// `renewal-reconciler compare-truth`: the database against the simulator's `truth.jsonl`, the same
/// comparison the demo prints (for the drills and for staging checks against the simulator).
struct CompareTruthCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compare-truth",
        abstract: "Compare the subscriptions in the database with the App Store simulator's truth file.",
        discussion: """
            Reads every line of the truth file written by `appstore-simulator export` and checks the \
            subscription it names: state, expiry, product, renewal fields, ledger size, and that refused \
            receipts left their rows untouched (docs/simulator.md, "truth.jsonl"). Prints the match line, \
            the scenarios not fully matched and the first mismatches. Exit 0 when every line matches, 1 when \
            one does not.
            """
    )

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var logging: LoggingOptions

    @Option(name: .customLong("truth"), help: ArgumentHelp("The simulator's truth.jsonl.", valueName: "file"))
    var truthFile: String

    @Option(help: "The app's bundle id the population was exported with.")
    var bundleId: String = "com.example.reader"

    @Flag(help: "Compare with what the App Store Server API implies (the records' server_api view).")
    var serverAPI = false

    @Option(help: "Print at most this many mismatches.")
    var limit: Int = 20

    func validate() throws {
        try SettingBounds.mismatchLimit.validate(limit, flag: "--limit")
    }

    func run() throws {
        logging.bootstrap()
        try runReportingErrors {
            guard FileManager.default.isReadableFile(atPath: truthFile) else {
                throw UsageError("--truth \(truthFile): no such readable file")
            }
            let conn = try PostgresConnection(try database.connectionString())
            defer { conn.close() }
            var comparison = TruthComparison(connection: conn, bundleId: bundleId)
            comparison.serverAPI = serverAPI
            comparison.detailLimit = max(limit, 0)
            let report = try comparison.compare(truthFile: truthFile)
            for line in report.lines(limit: max(limit, 0)) { print(line) }
            if report.compared == 0 || report.matched != report.compared { throw ExitCode.failure }
        }
    }
}
